import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetStream, monthOf } from '../../events/budget.ts';
import { runCli } from '../support/cli.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { logicalStream } from '../support/logical-events.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

// Three OpenAI credentials of weights 6, 3 and 1; the simulator answers each by its key.
const KEYS = { 'pool-alpha': 'sk-alpha', 'pool-beta': 'sk-beta', 'pool-gamma': 'sk-gamma' } as const;
type Name = keyof typeof KEYS;

let openai: Upstream;
let gateway: TestGateway;
let client: OpenAI;
let accountId: string;
let dir: string;

beforeAll(async () => {
  openai = await startOpenAiUpstream();
  dir = await mkdtemp(join(tmpdir(), 'gw-pools-'));
  const file = join(dir, 'gateway.json');
  const keys = [
    { name: 'pool-alpha', key: KEYS['pool-alpha'], weight: 6 },
    { name: 'pool-beta', key_env: 'POOL_BETA_KEY', weight: 3 },
    { name: 'pool-gamma', key: KEYS['pool-gamma'], weight: 1 },
  ];
  await writeFile(file, JSON.stringify({ providers: { openai: { base_url: `${openai.url}/v1`, keys } } }));
  gateway = await startTestGateway({
    GATEWAY_CONFIG: file,
    POOL_BETA_KEY: KEYS['pool-beta'],
    GATEWAY_MAX_RETRY_WAIT_MS: '2000',
  });
  const account = await json(await gateway.admin('/accounts', { name: 'pools' }));
  accountId = account.account_id;
  await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 100_000, reference: 'funding' });
  client = new OpenAI({ apiKey: account.key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.close();
  await openai?.close();
  await rm(dir, { recursive: true, force: true });
});

// Each request opens a conversation of its own: the same opening would keep its credential (key affinity).
let asked = 0;
const ask = () =>
  client.chat.completions.create({
    model: 'openai/gpt-4o-mini',
    max_tokens: 5,
    messages: [{ role: 'user', content: `hi ${++asked}` }],
  });

/** Runs `count` requests, `width` at a time; `after(done)` runs as each one ends (while others are in flight). */
async function load(count: number, width: number, after: (done: number) => void = () => {}): Promise<number> {
  let next = 0;
  let done = 0;
  let failures = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) {
        next++;
        await ask().catch(() => failures++);
        after(++done);
      }
    }),
  );
  return failures;
}

/** The credential each charge of the account names, in order. */
async function chargedCredentials(): Promise<Array<string | undefined>> {
  const events = await logicalStream(gateway.runtime.store, budgetStream(accountId, monthOf(new Date())));
  return events
    .filter((e) => e.type === 'SpendSettled')
    .map((e) => (e.data.charge as { credential?: string }).credential);
}

async function openaiCredentials(): Promise<Array<Record<string, unknown>>> {
  const body = await json(
    await fetch(`${gateway.url}/v1/health/providers`, {
      headers: { authorization: `Bearer ${client.apiKey}` },
    }),
  );
  return (body.data as Array<{ provider: string; credentials: Array<Record<string, unknown>> }>).find(
    (p) => p.provider === 'openai',
  )?.credentials as Array<Record<string, unknown>>;
}

const keyOf = (request: { headers: Record<string, string> }) =>
  request.headers.authorization?.replace('Bearer ', '');

describe('an OpenAI key pool', () => {
  it('spreads requests by weight, and every charge names the credential that served it', async () => {
    expect(await load(200, 10)).toBe(0);
    const sent = openai.requests.map(keyOf);
    const count = (name: Name) => sent.filter((key) => key === KEYS[name]).length;
    // Expected 120 / 60 / 20: each gap is more than five standard deviations of the draw.
    expect(count('pool-alpha')).toBeGreaterThan(count('pool-beta'));
    expect(count('pool-beta')).toBeGreaterThan(count('pool-gamma'));
    expect(count('pool-gamma')).toBeGreaterThan(0);
    const charged = await chargedCredentials();
    expect(charged).toHaveLength(200);
    for (const name of Object.keys(KEYS) as Name[]) {
      expect(charged.filter((c) => c === name)).toHaveLength(count(name));
    }
    // The secrets are nowhere in the charges.
    const events = JSON.stringify(
      await logicalStream(gateway.runtime.store, budgetStream(accountId, monthOf(new Date()))),
    );
    for (const secret of Object.values(KEYS)) expect(events).not.toContain(secret);
  });

  it('one key starting to answer 429 and another 402 mid-load fails no client request', async () => {
    const failures = await load(60, 10, (done) => {
      if (done !== 15) return;
      openai.scriptKey?.(KEYS['pool-alpha'], { kind: 'error', status: 402 });
      openai.scriptKey?.(KEYS['pool-beta'], { kind: 'rate_limited', retryAfterSeconds: 600 });
    });
    expect(failures).toBe(0);
    const charged = (await chargedCredentials()).slice(200);
    expect(charged).toHaveLength(60);
    expect(charged.every((c) => c !== undefined && c in KEYS)).toBe(true);
    // With one refused and one resting, the third serves.
    await ask();
    expect((await chargedCredentials()).at(-1)).toBe('pool-gamma');

    const credentials = await openaiCredentials();
    expect(credentials.map((c) => [c.name, c.state, c.reason])).toEqual([
      ['pool-alpha', 'out', 'quota'],
      ['pool-beta', 'cooling', 'rate_limited'],
      ['pool-gamma', 'active', null],
    ]);
    expect(typeof credentials[0]?.since).toBe('string');
    expect(JSON.stringify(credentials)).not.toContain('sk-');

    const metrics = await (
      await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${gateway.adminToken}` } })
    ).text();
    expect(metrics).toMatch(
      /^gateway_provider_credential_out_total\{provider="openai",credential="pool-alpha",reason="quota"\} 1$/m,
    );
  });

  it('a pool whose every key is rate limited answers 429 with Retry-After, and the operator can put a key back', async () => {
    openai.scriptKey?.(KEYS['pool-gamma'], { kind: 'rate_limited', retryAfterSeconds: 600 });
    const refused = await ask().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    const retryAfter = Number(
      (refused as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after'),
    );
    expect(retryAfter).toBeGreaterThan(1);

    // The refused credential comes back only when the operator puts it back, here with the CLI.
    openai.scriptKey?.(KEYS['pool-alpha'], undefined);
    const listed = await runCli(['credentials', 'list', '--provider', 'openai'], gateway.env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain('sk-');
    const shown = (listed.json as { credentials: Array<Record<string, unknown>> }).credentials;
    expect(shown.map((c) => [c.name, c.weight, c.state])).toEqual([
      ['pool-alpha', 6, 'out'],
      ['pool-beta', 3, 'cooling'],
      ['pool-gamma', 1, 'cooling'],
    ]);
    const back = await runCli(
      ['credentials', 'enable', '--provider', 'openai', '--name', 'pool-alpha'],
      gateway.env,
    );
    expect(back.code).toBe(0);
    expect((back.json as { credential: unknown }).credential).toMatchObject({
      name: 'pool-alpha',
      state: 'active',
      reason: null,
    });
    await ask();
    expect((await chargedCredentials()).at(-1)).toBe('pool-alpha');

    const unknown = await gateway.admin('/providers/openai/credentials/nope', { in_rotation: false });
    expect(unknown.status).toBe(404);
  });
});
