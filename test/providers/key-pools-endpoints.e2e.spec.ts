import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetStream, monthOf } from '../../events/budget.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { logicalStream } from '../support/logical-events.ts';
import { startOpenAiModalitiesUpstream } from '../upstreams/openai-modalities.ts';
import type { Upstream } from '../upstreams/types.ts';

// The endpoints priced by lines (embeddings, moderations, and the others on the same path) call with a key of the
// provider's pool too: the key drawn first (by far the heavier) is refused, the call moves on to the other.
const KEYS = { heavy: 'sk-heavy', light: 'sk-light' } as const;

let sim: Upstream;
let gateway: TestGateway;
let client: OpenAI;
let accountId: string;
let dir: string;

beforeAll(async () => {
  sim = await startOpenAiModalitiesUpstream();
  dir = await mkdtemp(join(tmpdir(), 'gw-pool-endpoints-'));
  const file = join(dir, 'gateway.json');
  const keys = [
    { name: 'heavy', key: KEYS.heavy, weight: 1_000_000 },
    { name: 'light', key: KEYS.light, weight: 1 },
  ];
  await writeFile(file, JSON.stringify({ providers: { openai: { base_url: `${sim.url}/v1`, keys } } }));
  gateway = await startTestGateway({
    GATEWAY_CONFIG: file,
    GATEWAY_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
  });
  const account = await json(await gateway.admin('/accounts', { name: 'endpoints' }));
  accountId = account.account_id;
  await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 10_000, reference: 'funding' });
  client = new OpenAI({ apiKey: account.key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.close();
  await sim?.close();
  await rm(dir, { recursive: true, force: true });
});

const keyOf = (request: { headers: Record<string, string> }) =>
  request.headers.authorization?.replace('Bearer ', '');

async function chargedCredentials(): Promise<Array<string | undefined>> {
  const events = await logicalStream(gateway.runtime.store, budgetStream(accountId, monthOf(new Date())));
  return events
    .filter((e) => e.type === 'SpendSettled')
    .map((e) => (e.data.charge as { credential?: string }).credential);
}

describe('the key pool on the endpoints priced by lines', () => {
  it('embeddings and moderations move past a refused key, and each charge names the credential that served', async () => {
    const embedded = await client.embeddings.create({ model: 'openai/text-embedding-3-small', input: 'hi' });
    expect(embedded.data).toHaveLength(1);
    expect(await chargedCredentials()).toEqual(['heavy']);

    sim.scriptKey?.(KEYS.heavy, { kind: 'error', status: 401 });
    // Another input: the same one would be the response cache's.
    const again = await client.embeddings.create({ model: 'openai/text-embedding-3-small', input: 'there' });
    expect(again.data).toHaveLength(1);
    const moderated = await client.moderations.create({
      model: 'openai/omni-moderation-latest',
      input: 'hi',
    });
    expect(moderated.results).toHaveLength(1);

    expect(sim.requests.map(keyOf)).toEqual([KEYS.heavy, KEYS.heavy, KEYS.light, KEYS.light]);
    expect(await chargedCredentials()).toEqual(['heavy', 'light', 'light']);
  });

  it("an account's own key serves its embeddings, charged the fee alone", async () => {
    const OWN = 'sk-own-embeddings-key';
    const registered = await fetch(`${gateway.url}/v1/provider-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${client.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ provider: 'openai', api_key: OWN, name: 'mine' }),
    });
    expect(registered.status).toBe(200);
    const before = sim.requests.length;
    const { response } = await client.embeddings
      .create({ model: 'openai/text-embedding-3-small', input: 'my own key' })
      .withResponse();
    expect(sim.requests.slice(before).map(keyOf)).toEqual([OWN]);
    const events = await logicalStream(gateway.runtime.store, budgetStream(accountId, monthOf(new Date())));
    const settled = events.filter((e) => e.type === 'SpendSettled').at(-1)?.data as {
      chargedNanos: string;
      charge: { discount: string; credential: string; feeNanos: string; passThroughNanos: string };
    };
    expect(settled.charge).toMatchObject({ discount: 'byok', credential: 'byok:mine' });
    expect(settled.chargedNanos).toBe(settled.charge.feeNanos);
    expect(BigInt(settled.charge.passThroughNanos)).toBeGreaterThan(BigInt(settled.charge.feeNanos));
    expect(Number(response.headers.get('x-cost-cents'))).toBe(Number(settled.chargedNanos) / 1e7);
  });
});
