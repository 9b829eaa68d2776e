import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { CredentialPools } from '../../src/providers/credentials/pool.ts';
import { UpstreamError } from '../../src/providers/errors.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-pool-config-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function start(openai: unknown, env: Record<string, string> = {}) {
  const path = join(dir, `${Math.random().toString(36).slice(2)}.json`);
  await writeFile(path, JSON.stringify({ providers: { openai } }));
  return loadConfig({ GATEWAY_CONFIG: path, ...env });
}

describe('key pools in the config file', () => {
  it('refuse to start on a bad key, naming its field', async () => {
    const refused = async (openai: unknown, field: RegExp, env?: Record<string, string>) => {
      const error = await start(openai, env).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(field);
    };
    await refused({ keys: [{ name: 'a', key: 'k', weight: -1 }] }, /providers\.openai\.keys\.0\.weight/);
    await refused(
      { keys: [{ name: 'a' }] },
      /providers\.openai\.keys\.0\.key: give exactly one of key and key_env/,
    );
    await refused({ keys: [{ name: 'a', key: 'k', rpm: 0 }] }, /providers\.openai\.keys\.0\.rpm/);
    await refused(
      { keys: [{ name: 'a', key: 'k', monthly_spend_cents: 1.5 }] },
      /providers\.openai\.keys\.0\.monthly_spend_cents/,
    );
    await refused({ keys: [{ name: 'a', key: 'k', rps: 5 }] }, /providers\.openai\.keys\.0: .*rps/);
    await refused({ keys: [{ name: 'default', key: 'k' }] }, /providers\.openai\.keys\.0\.name/);
    await refused(
      {
        keys: [
          { name: 'a', key: 'k' },
          { name: 'a', key: 'j' },
        ],
      },
      /providers\.openai\.keys: names must be unique/,
    );
    await refused(
      { keys: [{ name: 'a', key_env: 'NOT_SET_ANYWHERE' }] },
      /providers\.openai\.keys\.0\.key_env: NOT_SET_ANYWHERE is not set/,
    );
  });

  it('keep the single key as the credential named default, the environment winning', async () => {
    const config = await start(
      { api_key: 'from-file', keys: [{ name: 'b', key_env: 'B_KEY', weight: 2 }] },
      {
        OPENAI_API_KEY: 'from-env',
        B_KEY: 'sk-b',
      },
    );
    expect(config.pools.openai).toEqual([
      { name: 'default', key: 'from-env', weight: 1 },
      { name: 'b', key: 'sk-b', weight: 2 },
    ]);
  });
});

describe('a credential refusal', () => {
  const refusals: Array<[string, UpstreamError, string]> = [
    ['a 401', new UpstreamError('client', 'bad key', 401), 'unauthorized'],
    ['a 403', new UpstreamError('client', 'forbidden', 403), 'forbidden'],
    ['a 402', new UpstreamError('client', 'pay', 402), 'quota'],
    [
      "OpenAI's insufficient_quota 429",
      new UpstreamError('rate_limited', 'quota', 429, 1000, 'insufficient_quota'),
      'quota',
    ],
    [
      "Anthropic's billing_error",
      new UpstreamError('client', 'credit', 400, undefined, 'billing_error'),
      'quota',
    ],
  ];
  it.each(refusals)(
    '%s takes the credential out of rotation until the operator puts it back',
    (_, error, reason) => {
      // The draw always lands on the first credential in rotation.
      const specs = [
        { name: 'a', key: 'ka', weight: 1 },
        { name: 'b', key: 'kb', weight: 1 },
      ];
      const pools = new CredentialPools(
        { openai: specs },
        () => undefined,
        undefined,
        () => 0,
      );
      const outs: string[] = [];
      pools.onOut((out) => outs.push(out.reason));
      expect(pools.judge('openai', 'a', error)).toBe(true);
      expect(outs).toEqual([reason]);
      expect(pools.pick('openai', new Set())?.name).toBe('b');
      expect(pools.pick('openai', new Set(['b']))).toBeUndefined();
      expect(pools.credentialsOf('openai')[0]).toMatchObject({ state: 'out', reason });
      pools.setInRotation('openai', 'a', true);
      expect(pools.pick('openai', new Set())?.name).toBe('a');
    },
  );

  it('a lone credential is still asked after a refusal (nothing to give way to), and shows how it stands', () => {
    const pools = new CredentialPools({}, () => 'sk-env');
    pools.judge('openai', 'default', new UpstreamError('client', 'pay', 402));
    expect(pools.credentialsOf('openai')[0]).toMatchObject({
      name: 'default',
      state: 'out',
      reason: 'quota',
    });
    expect(pools.pick('openai', new Set())?.name).toBe('default');
    pools.served('openai', 'default');
    expect(pools.credentialsOf('openai')[0]).toMatchObject({ state: 'active', reason: null });
  });

  it('a plain 400 is the request, not the credential', () => {
    const pools = new CredentialPools({ openai: [{ name: 'a', key: 'k', weight: 1 }] }, () => undefined);
    expect(pools.judge('openai', 'a', new UpstreamError('client', 'bad request', 400))).toBe(false);
    expect(pools.judge('openai', 'a', new UpstreamError('server', 'down', 503))).toBe(false);
    expect(pools.credentialsOf('openai')[0]?.state).toBe('active');
  });
});
