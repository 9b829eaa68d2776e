import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Provider } from '@pydantic/genai-prices';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetStream, monthOf } from '../../events/budget.ts';
import { dropSchema } from '../support/database.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { logicalStream } from '../support/logical-events.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';
import { manualClock } from '../webhooks/support.ts';

// A dear model (10 cents a token, 6 tokens a call here), so that two calls pass a 1-dollar monthly ceiling; three credentials, each with
// one of the operator's limits, drawn by weight: `capped` first while it has room, then `quick`, then `rest`.
const pricey: Provider = {
  id: 'openai',
  name: 'OpenAI',
  api_pattern: 'https://api.openai.com',
  models: [
    {
      id: 'gpt-4o-mini',
      match: { equals: 'gpt-4o-mini' },
      prices: { input_mtok: 100_000, output_mtok: 100_000 },
    },
  ],
};
const KEYS = [
  { name: 'capped', key: 'sk-capped', weight: 1_000_000, monthly_spend_cents: 100 },
  { name: 'quick', key: 'sk-quick', weight: 1000, rpm: 2 },
  { name: 'rest', key: 'sk-rest', weight: 1, tpm: 1 },
];

const schema = `g_${randomBytes(6).toString('hex')}`;
const clock = manualClock(new Date());
let openai: Upstream;
let dir: string;
let dataDir: string;
let env: Record<string, string>;
let gateway: TestGateway;
let accountId: string;
let apiKey: string;

const start = () =>
  startTestGateway(env, { schema, dataDir, clock: clock.now, catalog: { providers: [pricey] } });

beforeAll(async () => {
  openai = await startOpenAiUpstream();
  dir = await mkdtemp(join(tmpdir(), 'gw-key-limits-'));
  dataDir = join(dir, 'data');
  const file = join(dir, 'gateway.json');
  await writeFile(
    file,
    JSON.stringify({ providers: { openai: { base_url: `${openai.url}/v1`, keys: KEYS } } }),
  );
  env = {
    GATEWAY_CONFIG: file,
    GATEWAY_MAX_RETRY_WAIT_MS: '0',
  };
  gateway = await start();
  const account = await json(await gateway.admin('/accounts', { name: 'limits' }));
  accountId = account.account_id;
  apiKey = account.key;
  await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 1_000_000, reference: 'funding' });
});
afterAll(async () => {
  await gateway?.close();
  await dropSchema(schema);
  await openai?.close();
  await rm(dir, { recursive: true, force: true });
});

const ask = () =>
  new OpenAI({ apiKey, baseURL: `${gateway.url}/v1`, maxRetries: 0 }).chat.completions
    .create({ model: 'openai/gpt-4o-mini', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })
    .then(
      () => 200,
      (error: unknown) => (error as { status?: number }).status ?? 0,
    );

async function charged(): Promise<Array<string | undefined>> {
  const events = await logicalStream(gateway.runtime.store, budgetStream(accountId, monthOf(clock.now())));
  return events
    .filter((e) => e.type === 'SpendSettled')
    .map((e) => (e.data.charge as { credential?: string }).credential);
}
const count = (all: Array<string | undefined>, name: string) => all.filter((c) => c === name).length;

async function limits(): Promise<Record<string, unknown>> {
  const shown = await fetch(`${gateway.url}/admin/providers/openai/credentials`, {
    headers: { authorization: `Bearer ${gateway.adminToken}` },
  });
  const { credentials } = (await shown.json()) as {
    credentials: Array<{ name: string; limit: { reached: string } | null }>;
  };
  return Object.fromEntries(credentials.map((c) => [c.name, c.limit?.reached ?? null]));
}

describe('per-credential limits', () => {
  it('skip a credential at its rpm, tpm or monthly spend until it has room; none left answers 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push(await ask());
    // Two calls pass capped's ceiling, two fill quick's minute, one rest's: then every one is at its limit.
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    const served = await charged();
    expect([count(served, 'capped'), count(served, 'quick'), count(served, 'rest')]).toEqual([2, 2, 1]);
    expect(await limits()).toEqual({ capped: 'monthly_spend', quick: 'rpm', rest: 'tpm' });

    // A minute on, the per-minute limits have room again; the month's ceiling has not.
    clock.set(61_000);
    expect(await ask()).toBe(200);
    expect(await ask()).toBe(200);
    const later = (await charged()).slice(5);
    expect(count(later, 'capped')).toBe(0);
    expect(count(later, 'quick') + count(later, 'rest')).toBe(2);
  });

  it('the monthly ceiling holds across a restart, from the charges that name the credential', async () => {
    // The next start reads the month's spend from the charges read model: let it hold every charge first.
    const folded = () =>
      gateway.runtime.database.pool.query<{ n: string }>(
        "SELECT count(*)::text AS n FROM charges WHERE kind = 'settled' AND credential = 'capped'",
      );
    await eventually(folded, ({ rows }) => rows[0]?.n === '2', 5000);
    await gateway.close();
    gateway = await start();
    clock.set(200_000);
    expect(await ask()).toBe(200);
    expect((await charged()).at(-1)).not.toBe('capped');
    expect((await limits()).capped).toBe('monthly_spend');
  });
});
