import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetStream, monthOf } from '../../events/budget.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Json, json } from '../support/json.ts';
import { logicalStream } from '../support/logical-events.ts';
import { type DeepgramLiveUpstream, startDeepgramLiveUpstream } from '../upstreams/deepgram-live.ts';
import { HandshakeRefused, streamAudio } from './realtime-client.ts';

// Live transcription streams on the operator's key pool and on an account's own key, as every other priced call
// does: a refused credential gives way to the next, and the stream's charges name the one it ran on.
const KEYS = { heavy: 'dg-heavy', light: 'dg-light', own: 'dg-own', revoked: 'dg-revoked' } as const;
const PCM = { model: 'deepgram/nova-3', encoding: 'linear16', sample_rate: '16000' };
/** Two seconds of 16 kHz mono 16-bit silence. */
const AUDIO = Buffer.alloc(64_000);

let sim: DeepgramLiveUpstream;
let gateway: TestGateway;
let accountId: string;
let key: string;
let dir: string;

beforeAll(async () => {
  // The heavy key is drawn first and the provider no longer accepts it.
  sim = await startDeepgramLiveUpstream({ keys: [KEYS.light, KEYS.own] });
  dir = await mkdtemp(join(tmpdir(), 'gw-realtime-pool-'));
  const file = join(dir, 'gateway.json');
  const keys = [
    { name: 'heavy', key: KEYS.heavy, weight: 1_000_000 },
    { name: 'light', key: KEYS.light, weight: 1 },
  ];
  await writeFile(file, JSON.stringify({ providers: { deepgram: { base_url: sim.url, keys } } }));
  gateway = await startTestGateway({
    GATEWAY_CONFIG: file,
    GATEWAY_SECRETS_KEY: Buffer.alloc(32, 9).toString('base64'),
  });
  const account = await json(await gateway.admin('/accounts', { name: 'realtime-pool' }));
  accountId = account.account_id;
  key = account.key;
  await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 1_000, reference: 'funding' });
});
afterAll(async () => {
  await gateway?.close();
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const v1 = (method: string, path: string, body?: unknown) =>
  fetch(`${gateway.url}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });

const stream = () => streamAudio(gateway.url, { ...PCM, api_key: key }, AUDIO);

interface Settled {
  requestId: string;
  chargedNanos: string;
  charge: { discount: string; credential?: string; feeNanos: string; passThroughNanos: string };
}

/** The account's charges, in order. */
async function charges(): Promise<Settled[]> {
  const events = await logicalStream(gateway.runtime.store, budgetStream(accountId, monthOf(new Date())));
  return events.filter((e) => e.type === 'SpendSettled').map((e) => e.data as unknown as Settled);
}

async function deepgramCredentials(): Promise<Json[]> {
  const body = await json(await v1('GET', '/health/providers'));
  return body.data.find((p: Json) => p.provider === 'deepgram')?.credentials;
}

const sentKeys = () => sim.streams.map((s) => s.headers.authorization);

describe('GET /v1/realtime on provider credentials', () => {
  it("moves past a key the provider refuses, and the stream's charge names the credential it ran on", async () => {
    const result = await stream();
    expect(result.code).toBe(1000);
    // Only accepted handshakes become streams: the refused key never carried audio.
    expect(sentKeys()).toEqual([`Token ${KEYS.light}`]);
    expect(await charges()).toEqual([
      expect.objectContaining({ charge: expect.objectContaining({ discount: 'none', credential: 'light' }) }),
    ]);
    expect(await deepgramCredentials()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'heavy', state: 'out', reason: 'unauthorized' }),
        expect.objectContaining({ name: 'light', state: 'active' }),
      ]),
    );
  });

  it("runs on the account's own key, each slice charged the platform fee alone", async () => {
    const registered = await v1('POST', '/provider-keys', {
      provider: 'deepgram',
      api_key: KEYS.own,
      name: 'mine',
    });
    expect(registered.status).toBe(200);
    const ownKeyId = (await json(registered)).id;
    const result = await stream();
    expect(result.code).toBe(1000);
    expect(sentKeys().at(-1)).toBe(`Token ${KEYS.own}`);
    const settled = (await charges()).at(-1) as Settled;
    expect(settled.charge).toMatchObject({ discount: 'byok', credential: 'byok:mine' });
    expect(settled.chargedNanos).toBe(settled.charge.feeNanos);
    expect(BigInt(settled.charge.passThroughNanos)).toBeGreaterThan(BigInt(settled.charge.feeNanos));
    expect((await v1('DELETE', `/provider-keys/${ownKeyId}`)).status).toBe(200);
  });

  it('answers a refused own key as the provider did, recording the failure, until the account allows the pool', async () => {
    const registered = await v1('POST', '/provider-keys', {
      provider: 'deepgram',
      api_key: KEYS.revoked,
      name: 'revoked',
    });
    expect(registered.status).toBe(200);
    const streamsBefore = sim.streams.length;
    const chargesBefore = (await charges()).length;
    const refusal = await stream().catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(HandshakeRefused);
    expect((refusal as HandshakeRefused).status).toBe(400);
    expect(sim.streams.length).toBe(streamsBefore);
    expect((await charges()).length).toBe(chargesBefore);
    // The request's record is the failure the client was answered with, not a served stream.
    const realtime = (page: Json) => page.data?.filter((r: Json) => r.endpoint === '/v1/realtime');
    const failures = await eventually(
      async () => json(await v1('GET', '/requests?status=400')),
      (page) => realtime(page)?.length >= 1,
      3000,
    );
    expect(realtime(failures)).toEqual([expect.objectContaining({ status: 400, cost_cents: 0 })]);

    await gateway.admin(`/accounts/${accountId}/settings`, { byok_fallback: true });
    const result = await stream();
    expect(result.code).toBe(1000);
    expect(sentKeys().at(-1)).toBe(`Token ${KEYS.light}`);
    expect((await charges()).at(-1)?.charge).toMatchObject({ discount: 'none', credential: 'light' });
  });
});

describe('a realtime stream refused before it opens', () => {
  it('is recorded in the request log as the 402 the client got', async () => {
    const broke = await json(await gateway.admin('/accounts', { name: 'realtime-broke' }));
    const refusal = await streamAudio(gateway.url, { ...PCM, api_key: broke.key }, AUDIO).catch(
      (error: unknown) => error,
    );
    expect((refusal as HandshakeRefused).status).toBe(402);
    const page = await eventually(
      async () =>
        json(
          await fetch(`${gateway.url}/v1/requests?status=402`, {
            headers: { authorization: `Bearer ${broke.key}` },
          }),
        ),
      (p) => p.data?.length >= 1,
      3000,
    );
    expect(page.data).toEqual([
      expect.objectContaining({ endpoint: '/v1/realtime', status: 402, error_type: 'insufficient_balance' }),
    ]);
  });
});
