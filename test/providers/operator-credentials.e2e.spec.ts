import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetStream, monthOf } from '../../events/budget.ts';
import { START } from '../../events/store.ts';
import { runCli } from '../support/cli.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { logicalStream } from '../support/logical-events.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

// Credentials added, changed and removed through the admin API and the CLI at runtime, on two instances over one
// store: each change made on one instance is followed by the other, kept across a restart, and never shows a secret.
const ENV_KEY = 'sk-env-default-key';
const TEAM_X = 'sk-added-team-x-secret-X1x1';
const TEAM_Y = 'sk-added-team-y-secret-Y2y2';
const FIRST = randomBytes(32).toString('base64');
const SECOND = randomBytes(32).toString('base64');

let openai: Upstream;
let first: TestGateway;
let second: TestGateway;
let accountId: string;
let apiKey: string;
let env: Record<string, string>;

const call = (gateway: TestGateway, method: string, path: string, body?: unknown) =>
  fetch(`${gateway.url}/admin${path}`, {
    method,
    headers: {
      authorization: `Bearer ${gateway.adminToken}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const POOL = '/providers/openai/credentials';

interface View {
  name: string;
  weight: number;
  source: string;
  last4: string;
  limits: Record<string, number | null>;
}
const listed = async (gateway: TestGateway): Promise<View[]> =>
  (await json(await call(gateway, 'GET', POOL))).credentials;
/** Waits until the instance's pool satisfies `test` (another instance's change reaches it through the log). */
async function until(gateway: TestGateway, test: (views: View[]) => boolean): Promise<void> {
  const views = await eventually(() => listed(gateway), test, 5000);
  expect(test(views), JSON.stringify(views)).toBe(true);
}
const named = (views: View[], name: string) => views.find((v) => v.name === name);

/** One chat request on the instance; answers the key the simulator saw. */
async function ask(gateway: TestGateway): Promise<string | undefined> {
  const client = new OpenAI({ apiKey, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  await client.chat.completions.create({
    model: 'openai/gpt-4o-mini',
    max_tokens: 5,
    messages: [{ role: 'user', content: `hi ${randomBytes(4).toString('hex')}` }],
  });
  return openai.requests.at(-1)?.headers.authorization?.replace(/^Bearer\s+/i, '');
}
async function lastChargeNames(count: number): Promise<Array<string | undefined>> {
  const events = await logicalStream(first.runtime.store, budgetStream(accountId, monthOf(new Date())));
  return events
    .filter((e) => e.type === 'SpendSettled')
    .slice(-count)
    .map((e) => (e.data.charge as { credential?: string }).credential);
}
/** The env default stays configured; disabling it on the serving instance leaves only the added credentials. */
const onlyAdded = (gateway: TestGateway) => call(gateway, 'POST', `${POOL}/default`, { in_rotation: false });

beforeAll(async () => {
  openai = await startOpenAiUpstream();
  env = { OPENAI_BASE_URL: `${openai.url}/v1`, OPENAI_API_KEY: ENV_KEY, GATEWAY_SECRETS_KEY: FIRST };
  first = await startTestGateway(env);
  second = await startTestGateway(env, { schema: first.env.GATEWAY_DB_SCHEMA });
  const account = await json(await first.admin('/accounts', { name: 'operator-credentials' }));
  accountId = account.account_id;
  apiKey = account.key;
  await first.admin(`/accounts/${accountId}/top-ups`, { cents: 10_000, reference: 'funding' });
  await eventually(
    async () =>
      (await fetch(`${second.url}/v1/balance`, { headers: { authorization: `Bearer ${apiKey}` } })).status,
    (status) => status === 200,
    5000,
  );
}, 60_000);
afterAll(async () => {
  await second?.close();
  await first?.close();
  await openai?.close();
});

describe('credentials the operator adds at runtime', () => {
  it('refuses bad input naming the field, and a name already in the pool', async () => {
    const refused = async (body: unknown, path = POOL, method = 'POST') => {
      const response = await call(first, method, path, body);
      return { status: response.status, error: (await json(response)).error };
    };
    const unknown = await refused({ name: 'a', key: 'k' }, '/providers/nope/credentials');
    expect(unknown.status).toBe(400);
    expect(unknown.error.message).toMatch(/'provider'.*nope/);
    for (const [body, field] of [
      [{ name: 'bad name!', key: 'k' }, 'name'],
      [{ name: 'default', key: 'k' }, 'name'],
      [{ name: 'ok', key: 'k', weight: 1_000_001 }, 'weight'],
      [{ name: 'ok', key: 'k', rpm: 0 }, 'rpm'],
      [{ name: 'ok', key: 'k', monthly_spend_cents: 1.5 }, 'monthly_spend_cents'],
      [{ name: 'ok' }, 'key'],
    ] as const) {
      const answer = await refused(body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.error.message).toContain(`'${field}'`);
    }
    const extra = await refused({ name: 'ok', key: 'k', secret: 'x' });
    expect(extra.status).toBe(400);
    expect(extra.error.message).toContain('secret');
    // The environment's credential is the operator's file or environment to change, not the API's.
    const fromEnv = await refused({ weight: 2 }, `${POOL}/default`, 'PATCH');
    expect(fromEnv.status).toBe(409);
    expect(fromEnv.error.message).toMatch(/config file or the environment/);
    expect((await refused(undefined, `${POOL}/default`, 'DELETE')).status).toBe(409);
    expect((await refused({ weight: 2 }, `${POOL}/nobody`, 'PATCH')).status).toBe(404);
    expect((await refused({}, `${POOL}/nobody`, 'PATCH')).error.message).toMatch(/give weight/);
  });

  it('adds one on one instance that serves requests on the other, its charges naming it', async () => {
    const added = await call(first, 'POST', POOL, { name: 'team-x', key: TEAM_X, weight: 5, rpm: 1000 });
    expect(added.status).toBe(200);
    const text = await added.text();
    expect(text).not.toContain(TEAM_X);
    // Every field, and no other (the answer is serialized through its response schema).
    expect(JSON.parse(text)).toEqual({
      provider: 'openai',
      credential: {
        name: 'team-x',
        weight: 5,
        state: 'active',
        reason: null,
        since: null,
        until: null,
        message: null,
        limit: null,
        source: 'api',
        last4: 'X1x1',
        limits: { rpm: 1000, tpm: null, monthly_spend_cents: null },
      },
    });
    const again = await call(first, 'POST', POOL, { name: 'team-x', key: 'sk-other' });
    expect(again.status).toBe(409);
    expect((await json(again)).error.type).toBe('conflict_error');

    await until(second, (views) => named(views, 'team-x')?.weight === 5);
    expect((await json(await onlyAdded(second))).credential).toMatchObject({
      name: 'default',
      state: 'out',
      reason: 'operator',
      since: expect.any(String),
      source: 'config',
    });
    expect(await ask(second)).toBe(TEAM_X);
    expect(await lastChargeNames(1)).toEqual(['team-x']);
  });

  it('adds one through the CLI, and a weight change made on one instance applies on the other', async () => {
    const cli = await runCli(
      [
        'credentials',
        'add',
        '--provider',
        'openai',
        '--name',
        'team-y',
        '--key-env',
        'TEAM_Y_KEY',
        '--weight',
        '1',
      ],
      { ...first.env, TEAM_Y_KEY: TEAM_Y },
    );
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).not.toContain(TEAM_Y);
    expect(cli.json).toMatchObject({
      provider: 'openai',
      credential: { name: 'team-y', source: 'api', last4: 'Y2y2' },
    });

    const changed = await call(first, 'PATCH', `${POOL}/team-x`, {
      weight: 0,
      rpm: null,
      monthly_spend_cents: 500,
    });
    expect((await json(changed)).credential).toMatchObject({
      weight: 0,
      limits: { rpm: null, tpm: null, monthly_spend_cents: 500 },
    });
    await until(
      second,
      (views) => named(views, 'team-x')?.weight === 0 && named(views, 'team-y') !== undefined,
    );
    // Weight 0 keeps team-x configured but unused: every request goes to team-y.
    expect([await ask(second), await ask(second), await ask(second)]).toEqual([TEAM_Y, TEAM_Y, TEAM_Y]);
    expect(await lastChargeNames(3)).toEqual(['team-y', 'team-y', 'team-y']);
  });

  it('removes one through the CLI, which stops its use on every instance', async () => {
    await call(second, 'PATCH', `${POOL}/team-x`, { weight: 1 });
    const removed = await runCli(
      ['credentials', 'remove', '--provider', 'openai', '--name', 'team-y'],
      second.env,
    );
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.json).toEqual({
      object: 'provider_credential',
      provider: 'openai',
      name: 'team-y',
      deleted: true,
    });
    // Answered once the instance that removed it applied it; the other follows.
    expect(named(await listed(second), 'team-y')).toBeUndefined();
    await until(
      first,
      (views) => named(views, 'team-y') === undefined && named(views, 'team-x')?.weight === 1,
    );
    expect([await ask(second), await ask(second)]).toEqual([TEAM_X, TEAM_X]);
    expect((await call(first, 'DELETE', `${POOL}/team-y`)).status).toBe(404);
  });

  it('records each change without the secret, which is in no event or listing', async () => {
    const events = await logicalStream(first.runtime.store, 'credential-openai');
    expect(events.map((e) => e.type)).toEqual([
      'ProviderCredentialAdded',
      'ProviderCredentialAdded',
      'ProviderCredentialChanged',
      'ProviderCredentialChanged',
      'ProviderCredentialRemoved',
    ]);
    expect(events[0]?.data).toMatchObject({
      provider: 'openai',
      credential: 'team-x',
      weight: 5,
      rpm: 1000,
      last4: 'X1x1',
    });
    expect(events[2]?.data).toMatchObject({
      credential: 'team-x',
      weight: 0,
      rpm: null,
      monthlySpendNanos: '5000000000',
    });
    const everything = JSON.stringify(
      await first.runtime.store.readAll(START, { maxCount: 100_000 }),
      (_, v) => (typeof v === 'bigint' ? v.toString() : v),
    );
    const listings = JSON.stringify([
      await listed(first),
      await json(await call(second, 'GET', '/providers/credentials')),
    ]);
    for (const secret of [TEAM_X, TEAM_Y]) {
      expect(everything).not.toContain(secret);
      expect(listings).not.toContain(secret);
    }
  });

  it('refuses to add without GATEWAY_SECRETS_KEY, naming the setting', async () => {
    const bare = await startTestGateway(
      { OPENAI_BASE_URL: env.OPENAI_BASE_URL as string, OPENAI_API_KEY: ENV_KEY },
      { schema: first.env.GATEWAY_DB_SCHEMA },
    );
    try {
      const refused = await call(bare, 'POST', POOL, { name: 'team-z', key: 'sk-z' });
      expect(refused.status).toBe(403);
      expect((await json(refused)).error).toMatchObject({ type: 'permission_error' });
      expect(
        (await json(await call(bare, 'POST', POOL, { name: 'team-z', key: 'sk-z' }))).error.message,
      ).toContain('GATEWAY_SECRETS_KEY');
      // What it cannot open it leaves out rather than serve with.
      expect(named(await listed(bare), 'team-x')).toBeUndefined();
    } finally {
      await bare.close();
    }
  });

  it('keeps an added credential across a restart, re-sealed under a rotated secrets key', async () => {
    const rotated = await runCli(['provider-keys', 'reencrypt'], {
      ...first.env,
      GATEWAY_SECRETS_KEY: SECOND,
      GATEWAY_SECRETS_KEY_PREVIOUS: FIRST,
    });
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.json).toMatchObject({ provider_credentials: { reencrypted: 1, unreadable: 0, total: 1 } });
    await second.close();
    second = await startTestGateway(
      { ...env, GATEWAY_SECRETS_KEY: SECOND },
      { schema: first.env.GATEWAY_DB_SCHEMA },
    );
    expect(named(await listed(second), 'team-x')).toMatchObject({ weight: 1, source: 'api', last4: 'X1x1' });
    expect(named(await listed(second), 'team-y')).toBeUndefined();
    await onlyAdded(second);
    expect(await ask(second)).toBe(TEAM_X);
    expect(await lastChargeNames(1)).toEqual(['team-x']);
  });
});
