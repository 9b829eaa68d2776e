import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projections } from '../../projections/index.ts';
import { runCli } from '../support/cli.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

let gateway: TestGateway;
const balance = async (key: string) =>
  json(await fetch(`${gateway.url}/v1/balance`, { headers: { authorization: `Bearer ${key}` } }));

beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(async () => {
  await gateway?.close();
});

describe.each([
  ['through the running gateway', () => gateway.env],
  // Nothing listens at port 9: the CLI falls back to the store, and the gateway learns by subscription.
  ['on the store directly', () => ({ ...gateway.env, GATEWAY_URL: 'http://127.0.0.1:9' })],
])('operator CLI %s', (_, env) => {
  it('opens an account, issues and revokes keys, and records top-ups once per reference', async () => {
    const created = await runCli(['accounts', 'create', '--name', 'Acme'], env());
    expect(created.code).toBe(0);
    expect(created.json).toEqual({
      account_id: expect.stringMatching(/^acct_/),
      key: expect.stringMatching(/^sk-gw-/),
      key_id: expect.stringMatching(/^key_/),
    });
    const { account_id: accountId, key } = created.json as { account_id: string; key: string };
    expect(
      await eventually(
        () => balance(key),
        (b) => b.cents === 0,
      ),
    ).toEqual({ cents: 0, usd: 0 });

    const topUp = ['topup', '--account', accountId, '--cents', '250', '--reference', 'ch_1'];
    expect((await runCli(topUp, env())).json).toMatchObject({ credited: true });
    expect((await runCli(topUp, env())).json).toMatchObject({ credited: false });
    expect(
      await eventually(
        () => balance(key),
        (b) => b.cents === 250,
        1000,
      ),
    ).toEqual({ cents: 250, usd: 2.5 });

    const second = await runCli(['keys', 'create', '--account', accountId], env());
    const { key: otherKey, key_id: otherKeyId } = second.json as { key: string; key_id: string };
    expect(
      await eventually(
        () => balance(otherKey),
        (b) => b.cents === 250,
      ),
    ).toEqual({ cents: 250, usd: 2.5 });
    const revoked = await runCli(['keys', 'revoke', '--key-id', otherKeyId], env());
    expect(revoked.json).toMatchObject({ key_id: otherKeyId, revoked: true });
    const refused = await eventually(
      () => fetch(`${gateway.url}/v1/balance`, { headers: { authorization: `Bearer ${otherKey}` } }),
      (r) => r.status === 401,
    );
    expect(refused.status).toBe(401);
  });

  it('names a key with an expiry, lists it, and rotates it: the old key stops on the gateway at once', async () => {
    const account = await json(await gateway.admin('/accounts', { name: 'named' }));
    const expires = new Date(Date.now() + 86_400_000);
    const created = await runCli(
      [
        'keys',
        'create',
        '--account',
        account.account_id,
        '--name',
        'ci',
        '--expires-at',
        expires.toISOString(),
      ],
      env(),
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.json).toMatchObject({
      account_id: account.account_id,
      key_id: expect.stringMatching(/^key_/),
      name: 'ci',
      expires_at: Math.floor(expires.getTime() / 1000),
    });
    const { key_id: keyId, key } = created.json as { key_id: string; key: string };
    const listed = await runCli(['keys', 'list', '--account', account.account_id], env());
    expect((listed.json as { data: unknown[] }).data).toEqual([
      expect.objectContaining({ key_id: keyId, name: 'ci', sub_account_id: null, revoked_at: null }),
      expect.objectContaining({ key_id: account.key_id, name: 'default', expires_at: null }),
    ]);
    expect((await balance(key)).cents).toBe(0);
    const rotated = await runCli(['keys', 'rotate', '--key-id', keyId], env());
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.json).toMatchObject({ account_id: account.account_id, name: 'ci', replaces: keyId });
    // The command answers once the gateway has applied the rotation, whichever way it went.
    const refused = await fetch(`${gateway.url}/v1/balance`, { headers: { authorization: `Bearer ${key}` } });
    expect(refused.status).toBe(401);
    expect((await balance((rotated.json as { key: string }).key)).cents).toBe(0);
  });

  it('reports a refusal as a JSON error and a non-zero exit', async () => {
    const result = await runCli(
      ['topup', '--account', 'acct_nobody', '--cents', '1', '--reference', 'x'],
      env(),
    );
    expect(result.code).toBe(1);
    expect(result.json).toMatchObject({ error: { type: 'not_found_error', code: 404 } });
  });
});

describe('operator CLI usage', () => {
  it('explains itself on bad usage', async () => {
    const result = await runCli(
      ['topup', '--account', 'a', '--cents', 'lots', '--reference', 'r'],
      gateway.env,
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--cents must be a positive integer');
    expect(result.stderr).toContain('Usage: npm run -s gateway');
  });

  it('names a bad setting instead of answering a 500', async () => {
    const result = await runCli(['keys', 'list', '--account', 'a'], { ...gateway.env, PORT: 'abc' });
    expect(result.code).toBe(1);
    expect(result.json).toMatchObject({ error: { type: 'config_error', code: 1 } });
    expect((result.json as { error: { message: string } }).error.message).toMatch(
      /^invalid configuration: PORT/,
    );
  });
});

describe('projections from the CLI', () => {
  it('shows each checkpoint and lag, and rebuilds into identical tables', async () => {
    const snapshot = async () => {
      const pool = gateway.runtime.database.pool;
      const [accounts, keys, balances, topUps] = await Promise.all([
        pool.query('SELECT * FROM accounts ORDER BY account_id'),
        pool.query('SELECT * FROM api_keys ORDER BY key_id'),
        pool.query('SELECT * FROM balances ORDER BY account_id'),
        pool.query('SELECT * FROM top_ups ORDER BY account_id, reference'),
      ]);
      return [accounts.rows, keys.rows, balances.rows, topUps.rows];
    };
    // The live tables are compared with the rebuild: taken before they folded the last events (the key rotations
    // above), they would be short of it.
    const status = await eventually(
      () => runCli(['projections', 'status'], gateway.env),
      (s) => s.code === 0 && (s.json as { lag: number }[]).every((p) => p.lag === 0),
      10_000,
    );
    expect(status.code).toBe(0);
    expect(status.json).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'balances', lag: expect.any(Number) })]),
    );
    const before = await snapshot();
    expect(before[0]?.length).toBeGreaterThan(0);
    const rebuilt = await runCli(['projections', 'rebuild'], gateway.env);
    expect(rebuilt.code).toBe(0);
    expect(rebuilt.json).toHaveLength(projections.length);
    expect(await snapshot()).toEqual(before);

    // The live runner resumes from the swapped-in checkpoint: a new event lands once.
    const account = (await runCli(['accounts', 'create', '--name', 'After'], gateway.env)).json as {
      account_id: string;
      key: string;
    };
    await runCli(
      ['topup', '--account', account.account_id, '--cents', '7', '--reference', 'r1'],
      gateway.env,
    );
    expect(
      await eventually(
        () => balance(account.key),
        (b) => b.cents === 7,
      ),
    ).toEqual({ cents: 7, usd: 0.07 });
    const one = await runCli(['projections', 'rebuild', 'balances'], gateway.env);
    expect(one.json).toEqual([expect.objectContaining({ name: 'balances' })]);
    expect(await balance(account.key)).toEqual({ cents: 7, usd: 0.07 });
    const lagged = (await runCli(['projections', 'status'], gateway.env)).json as { lag: number }[];
    expect(lagged.every((p) => p.lag === 0)).toBe(true);
    const unknown = await runCli(['projections', 'rebuild', 'nope'], gateway.env);
    expect(unknown.code).toBe(2);
  });
});
