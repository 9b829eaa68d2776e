import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialStream } from '../../events/credential.ts';
import { dropSchema } from '../support/database.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';
import { adminPost, openAccount, type Receiver, startReceiver, until } from '../webhooks/support.ts';

// One store, three instances in turn: one with no operator account, then two with one, that meet the same refusal.
const schema = `g_${randomBytes(6).toString('hex')}`;
const adminToken = `gw-admin-${randomBytes(16).toString('hex')}`;
const KEYS = { a: 'sk-alpha-secret', b: 'sk-beta-secret', c: 'sk-gamma-secret' } as const;

let openai: Upstream;
let dir: string;
let file: string;
let operator: Receiver;
let customer: Receiver;
let customerKey: string;
let operatorId: string;
const open: TestGateway[] = [];

async function start(extra: Record<string, string>, log: string[]) {
  const gateway = await startTestGateway(
    { GATEWAY_CONFIG: file, GATEWAY_ADMIN_TOKEN: adminToken, GATEWAY_ALLOW_PRIVATE_URLS: 'true', ...extra },
    { schema, workerIntervalsMs: { webhooks: 20 }, log: (line) => log.push(line) },
  );
  open.push(gateway);
  return gateway;
}

/** Asks through the gateway until its pool holds the credential out; every ask is served by another key. */
async function askUntilOut(gateway: TestGateway, name: keyof typeof KEYS) {
  const client = new OpenAI({ apiKey: customerKey, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  for (let i = 0; i < 40; i++) {
    const answer = await client.chat.completions.create({
      model: 'openai/gpt-4o-mini',
      max_tokens: 5,
      // A conversation of its own each time: one opening would keep its credential (key affinity).
      messages: [{ role: 'user', content: `hi ${i}` }],
    });
    expect(answer.choices[0]?.message.content).toBeTruthy();
    const shown = await fetch(`${gateway.url}/admin/providers/openai/credentials`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    const { credentials } = (await shown.json()) as { credentials: Array<{ name: string; state: string }> };
    if (credentials.find((c) => c.name === name)?.state === 'out') return;
  }
  throw new Error(`${name} was never drawn`);
}

const refusals = async (gateway: TestGateway) =>
  (await gateway.runtime.store.readStream(credentialStream('openai'))).map(
    (e) => e.data as { credential: string; operatorAccountId: string | null; message: string },
  );
const typesOf = (receiver: Receiver) =>
  receiver.received.map((r) => (JSON.parse(r.body) as { type: string }).type);

beforeAll(async () => {
  openai = await startOpenAiUpstream();
  operator = await startReceiver();
  customer = await startReceiver();
  dir = await mkdtemp(join(tmpdir(), 'gw-cred-notices-'));
  file = join(dir, 'gateway.json');
  const keys = Object.entries(KEYS).map(([name, key]) => ({ name, key, weight: name === 'c' ? 1 : 20 }));
  await writeFile(file, JSON.stringify({ providers: { openai: { base_url: `${openai.url}/v1`, keys } } }));
});
afterAll(async () => {
  for (const gateway of open) await gateway.close().catch(() => undefined);
  await dropSchema(schema);
  await Promise.all([openai?.close(), operator?.close(), customer?.close()]);
  await rm(dir, { recursive: true, force: true });
});

describe('a credential the provider refuses', () => {
  it('without an operator account is recorded and logged, its secret blanked, and sent to nobody', async () => {
    const log: string[] = [];
    const first = await start({}, log);
    const op = await openAccount(first.url, adminToken);
    const cust = await openAccount(first.url, adminToken);
    operatorId = op.account_id;
    customerKey = cust.key;
    await adminPost(first.url, adminToken, `/accounts/${cust.account_id}/top-ups`, {
      cents: 10_000,
      reference: 'f',
    });
    for (const [account, receiver] of [
      [op.account_id, operator],
      [cust.account_id, customer],
    ] as const) {
      const set = await adminPost(first.url, adminToken, `/accounts/${account}/webhook-endpoint`, {
        url: receiver.url,
      });
      expect(set.status).toBe(200);
    }
    // OpenAI quotes (part of) a wrong key back in its 401.
    openai.scriptKey?.(KEYS.a, {
      kind: 'error',
      status: 401,
      body: {
        error: {
          message: `Incorrect API key provided: ${KEYS.a}.`,
          type: 'invalid_request_error',
          code: 'invalid_api_key',
        },
      },
    });
    await askUntilOut(first, 'a');
    const recorded = await until(
      () => refusals(first),
      (all) => all.length === 1,
    );
    expect(recorded[0]).toMatchObject({
      credential: 'a',
      operatorAccountId: null,
      reason: 'unauthorized',
      status: 401,
    });
    expect(recorded[0]?.message).toBe('Incorrect API key provided: [redacted].');
    expect(log.some((line) => line.includes('openai/a out of rotation (unauthorized)'))).toBe(true);
    expect(log.join('\n')).not.toContain(KEYS.a);
    await first.close();
    open.length = 0;
  });

  it('with one is sent, signed, to the operator account alone, once however many instances meet it', async () => {
    const logs: [string[], string[]] = [[], []];
    const one = await start({ GATEWAY_OPERATOR_ACCOUNT: operatorId }, logs[0]);
    const two = await start({ GATEWAY_OPERATOR_ACCOUNT: operatorId }, logs[1]);
    openai.scriptKey?.(KEYS.b, {
      kind: 'error',
      status: 402,
      body: {
        error: {
          message: 'You exceeded your current quota.',
          type: 'insufficient_quota',
          code: 'insufficient_quota',
        },
      },
    });
    await askUntilOut(one, 'b');
    await until(
      () => refusals(one),
      (all) => all.length === 2,
    );
    await askUntilOut(two, 'b');
    // The second instance decided on top of the first one's record: nothing new.
    await until(
      () => logs[1],
      (lines) => lines.some((line) => line.includes('refusal of openai/b was already recorded')),
    );
    expect((await refusals(two)).map((r) => [r.credential, r.operatorAccountId])).toEqual([
      ['a', null],
      ['b', operatorId],
    ]);

    const received = await until(
      () => operator.received,
      (all) => all.length >= 1,
    );
    expect(typesOf(operator)).toEqual(['provider.credential.out']);
    const body = JSON.parse(received[0]?.body as string);
    expect(body.data).toEqual({
      provider: 'openai',
      credential: 'b',
      reason: 'quota',
      status: 402,
      message: 'You exceeded your current quota.',
      at: expect.any(String),
    });
    expect(received[0]?.headers['x-gw-event-type']).toBe('provider.credential.out');
    expect(typeof received[0]?.headers['x-gw-signature']).toBe('string');
    // A customer's endpoint never hears of the operator's keys.
    expect(typesOf(customer)).not.toContain('provider.credential.out');
  });
});
