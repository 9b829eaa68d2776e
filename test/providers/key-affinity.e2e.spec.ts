import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetStream, monthOf } from '../../events/budget.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { logicalStream } from '../support/logical-events.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

// Three OpenAI credentials of equal weight, over two instances on one store: a conversation keeps the credential
// it was served on (the provider's prompt cache is that key's), across instances through its record.
const KEYS = { 'key-a': 'sk-aff-a', 'key-b': 'sk-aff-b', 'key-c': 'sk-aff-c' } as const;

let openai: Upstream;
let first: TestGateway;
let second: TestGateway;
let dir: string;

beforeAll(async () => {
  openai = await startOpenAiUpstream();
  dir = await mkdtemp(join(tmpdir(), 'gw-affinity-'));
  const file = join(dir, 'gateway.json');
  const keys = Object.entries(KEYS).map(([name, key]) => ({ name, key, weight: 1 }));
  await writeFile(file, JSON.stringify({ providers: { openai: { base_url: `${openai.url}/v1`, keys } } }));
  first = await startTestGateway({ GATEWAY_CONFIG: file });
  second = await startTestGateway({ GATEWAY_CONFIG: file }, { schema: first.env.GATEWAY_DB_SCHEMA });
}, 60_000);
afterAll(async () => {
  await second?.close();
  await first?.close();
  await openai?.close();
  await rm(dir, { recursive: true, force: true });
});

async function openAccount(name: string) {
  const account = await json(await first.admin('/accounts', { name }));
  await first.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'funding' });
  const clientOf = (gateway: TestGateway) =>
    new OpenAI({ apiKey: account.key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  // The second instance must know the account before it is asked.
  await eventually(
    async () =>
      (await fetch(`${second.url}/v1/balance`, { headers: { authorization: `Bearer ${account.key}` } }))
        .status,
    (status) => status === 200,
    5000,
  );
  return { accountId: account.account_id as string, on: clientOf(first), off: clientOf(second) };
}

const authOf = (client: OpenAI) => ({ authorization: `Bearer ${client.apiKey}` });

/** The credential each of the account's charges names, in order. */
async function credentials(accountId: string): Promise<string[]> {
  const events = await logicalStream(first.runtime.store, budgetStream(accountId, monthOf(new Date())));
  return events
    .filter((e) => e.type === 'SpendSettled')
    .map((e) => (e.data.charge as { credential?: string }).credential ?? '-');
}

describe('a conversation keeps its provider credential', () => {
  it('a Responses follow-up is served on the credential of the response it continues, on another instance too', async () => {
    const { accountId, on, off } = await openAccount('follow-ups');
    const opened = [];
    for (let n = 1; n <= 8; n++)
      opened.push(
        await on.responses.create({ model: 'openai/gpt-4o-mini', input: `open ${n}`, max_output_tokens: 8 }),
      );
    const firsts = await credentials(accountId);
    // Each follow-up goes to the other instance, which never served these conversations: only the record of the
    // response it continues can keep its credential there.
    for (const response of opened) {
      await eventually(
        async () =>
          (await fetch(`${second.url}/v1/responses/${response.id}`, { headers: authOf(off) })).status,
        (status) => status === 200,
        5000,
      );
      await off.responses.create({
        model: 'openai/gpt-4o-mini',
        input: 'and then?',
        max_output_tokens: 8,
        previous_response_id: response.id,
      });
    }
    const seconds = (await credentials(accountId)).slice(8);
    // Equal weights: eight follow-ups each landing on its conversation's credential by chance is one in 6,561.
    expect(seconds).toEqual(firsts);
  });

  it('gives way when that credential is out: the follow-up is served on another, not refused', async () => {
    const { accountId, on } = await openAccount('gives way');
    const opened = await on.responses.create({
      model: 'openai/gpt-4o-mini',
      input: 'open',
      max_output_tokens: 8,
    });
    const [served] = await credentials(accountId);
    const key = KEYS[served as keyof typeof KEYS];
    openai.scriptKey?.(key, { kind: 'error', status: 402 });
    try {
      const next = await on.responses.create({
        model: 'openai/gpt-4o-mini',
        input: 'and then',
        max_output_tokens: 8,
        previous_response_id: opened.id,
      });
      expect(next.status).toBe('completed');
      const [, then] = await credentials(accountId);
      expect(then).not.toBe(served);
    } finally {
      openai.scriptKey?.(key, undefined);
      // Back into rotation for the tests after this one.
      for (const gateway of [first, second])
        await gateway.admin(`/providers/openai/credentials/${served}`, { in_rotation: true });
    }
  });

  it('chat with the same opening keeps one credential; different openings still spread over the pool', async () => {
    const { accountId, on } = await openAccount('openings');
    const system = { role: 'system' as const, content: 'You answer briefly.' };
    for (let turn = 1; turn <= 8; turn++) {
      await on.chat.completions.create({
        model: 'openai/gpt-4o-mini',
        max_tokens: 5,
        messages: [
          system,
          { role: 'user', content: 'the same first question' },
          { role: 'assistant', content: 'an answer' },
          { role: 'user', content: `follow-up ${turn}` },
        ],
      });
    }
    const same = await credentials(accountId);
    expect(new Set(same).size).toBe(1);
    for (let n = 1; n <= 30; n++) {
      await on.chat.completions.create({
        model: 'openai/gpt-4o-mini',
        max_tokens: 5,
        messages: [system, { role: 'user', content: `question number ${n}` }],
      });
    }
    // Thirty openings of their own on one credential of three would be three times in 3^30.
    expect(new Set((await credentials(accountId)).slice(8)).size).toBeGreaterThan(1);
  });
});
