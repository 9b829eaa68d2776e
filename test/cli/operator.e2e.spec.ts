import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { chat, say } from '../support/chat.ts';
import { runCli } from '../support/cli.ts';
import { dropSchema } from '../support/database.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';

const ROOT = join(import.meta.dirname, '..', '..');
let gateway: TestGateway;
let accountId: string;
let key: string;
let emptyDir: string;

beforeAll(async () => {
  gateway = await startTestGateway();
  emptyDir = await mkdtemp(join(tmpdir(), 'gw-cli-empty-'));
  const created = await runCli(['accounts', 'create', '--name', 'Operator View'], gateway.env);
  ({ account_id: accountId, key } = created.json as { account_id: string; key: string });
  await runCli(['topup', '--account', accountId, '--cents', '500', '--reference', 'seed'], gateway.env);
  await eventually(
    () => chat(gateway.url, key, say('hello')),
    (r) => r.status === 200,
    5000,
  );
  await chat(gateway.url, key, say('tagged'), { 'x-gw-tag': 'nightly' });
});
afterAll(async () => {
  await gateway?.close();
  await rm(emptyDir, { recursive: true, force: true });
});

/** Nothing listens at port 9: the CLI must decide what to do without a gateway. */
const NO_GATEWAY = 'http://127.0.0.1:9';

describe('operator CLI: where it works', () => {
  it('--help prints the usage on stdout and exits 0', async () => {
    const result = await runCli(['--help'], {});
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('accounts list');
    expect(result.stdout).toContain('--init');
  });

  it('says "gateway at" on stderr when a gateway answers, and stdout is the JSON alone', async () => {
    const result = await runCli(['accounts', 'list'], gateway.env);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`gateway at ${gateway.url}`);
    expect(() => JSON.parse(result.stdout)).not.toThrow();
  });

  it('says "store at" when it works on the store', async () => {
    const result = await runCli(['accounts', 'list'], { ...gateway.env, GATEWAY_URL: NO_GATEWAY });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`no gateway answered at ${NO_GATEWAY}`);
    expect(result.stderr).toContain(`store at PostgreSQL`);
    expect(result.stderr).toContain(`schema ${gateway.env.GATEWAY_DB_SCHEMA}`);
    expect(result.stderr).not.toContain('postgres:postgres@');
  });

  it('refuses to create an embedded store that does not exist, and leaves the directory untouched', async () => {
    const env = {
      GATEWAY_DATA_DIR: emptyDir,
      GATEWAY_URL: NO_GATEWAY,
      DATABASE_URL: '',
      GATEWAY_ADMIN_TOKEN: '',
    };
    const result = await runCli(['accounts', 'create', '--name', 'Lost'], env);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const message = (result.json as { error: { message: string } }).error.message;
    expect(message).toContain(`no store in ${emptyDir}`);
    expect(message).toContain('--init');
    expect(await readdir(emptyDir)).toEqual([]);
  });

  it('refuses an external schema that holds no store, and creates one with --init', async () => {
    const schema = `cli_${randomBytes(5).toString('hex')}`;
    const env = {
      DATABASE_URL: inject('databaseUrl'),
      GATEWAY_DB_SCHEMA: schema,
      GATEWAY_DATA_DIR: emptyDir,
      GATEWAY_URL: NO_GATEWAY,
      GATEWAY_ADMIN_TOKEN: '',
    };
    try {
      const refused = await runCli(['accounts', 'list'], env);
      expect(refused.code).toBe(1);
      expect((refused.json as { error: { message: string } }).error.message).toContain(`schema ${schema}`);
      const created = await runCli(['accounts', 'create', '--name', 'Fresh', '--init'], env);
      expect(created.code).toBe(0);
      expect(created.stderr).toContain('--init');
      const listed = await runCli(['accounts', 'list'], env);
      expect(listed.code).toBe(0);
      expect((listed.json as { data: { name: string }[] }).data.map((a) => a.name)).toEqual(['Fresh']);
    } finally {
      await dropSchema(schema);
    }
  });

  it('runs as `npm run -s gateway` and as the model-gateway bin with the JSON alone on stdout', async () => {
    const run = (command: string, args: string[]) =>
      new Promise<{ code: number; stdout: string }>((resolve) => {
        execFile(
          command,
          args,
          { cwd: ROOT, env: { ...process.env, ...gateway.env }, timeout: 60_000 },
          (error, stdout) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout }),
        );
      });
    const viaNpm = await run('npm', [
      'run',
      '-s',
      'gateway',
      '--',
      'accounts',
      'show',
      '--account',
      accountId,
    ]);
    expect(viaNpm.code).toBe(0);
    expect(JSON.parse(viaNpm.stdout)).toMatchObject({ account_id: accountId });
    const viaBin = await run('npx', [
      '--no-install',
      'model-gateway',
      'keys',
      'list',
      '--account',
      accountId,
    ]);
    expect(viaBin.code).toBe(0);
    expect(JSON.parse(viaBin.stdout)).toMatchObject({ object: 'list' });
  });
});

describe.each([
  ['through the running gateway', () => gateway.env],
  ['on the store directly', () => ({ ...gateway.env, GATEWAY_URL: NO_GATEWAY })],
])('operator reads %s', (_, env) => {
  it('lists and shows accounts with their balance and keys', async () => {
    const list = await runCli(['accounts', 'list'], env());
    expect(list.code).toBe(0);
    const mine = (list.json as { data: { account_id: string }[] }).data.find(
      (a) => a.account_id === accountId,
    );
    expect(mine).toMatchObject({ name: 'Operator View', active_keys: 1, sub_accounts: 0 });
    const shown = await runCli(['accounts', 'show', '--account', accountId], env());
    expect(shown.json).toMatchObject({
      account_id: accountId,
      keys: [{ key_prefix: key.slice(0, 12), revoked_at: null }],
      balance_detail: { topped_up_cents: 500 },
    });
    const missing = await runCli(['accounts', 'show', '--account', 'acct_nobody'], env());
    expect(missing.code).toBe(1);
    expect(missing.json).toMatchObject({ error: { code: 404 } });
  });

  it('lists keys, the balance now and the month usage per sub-account and tag', async () => {
    const keys = await runCli(['keys', 'list', '--account', accountId], env());
    expect((keys.json as { data: unknown[] }).data).toHaveLength(1);
    const usage = (await eventually(
      async () => (await runCli(['usage', '--account', accountId], env())).json,
      (u) => (u as { total?: { requests: number } }).total?.requests === 2,
      5000,
    )) as {
      total: { requests: number; cost_cents: number };
      by_tag: { tag: string; requests: number }[];
      by_sub_account: { sub_account_id: string; requests: number }[];
    };
    expect(usage.total.requests).toBe(2);
    expect(usage.by_tag).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ tag: '', requests: 1 }),
        expect.objectContaining({ tag: 'nightly', requests: 1 }),
      ]),
    );
    expect(usage.by_sub_account).toEqual([expect.objectContaining({ sub_account_id: '', requests: 2 })]);
    const balance = (await runCli(['balance', '--account', accountId], env())).json as {
      cents: number;
      topped_up_cents: number;
      charged_cents: number;
    };
    expect(balance.topped_up_cents).toBe(500);
    expect(balance.charged_cents).toBeGreaterThan(0);
    expect(balance.cents).toBe(Math.floor(500 - balance.charged_cents));
    const empty = await runCli(['usage', '--account', accountId, '--month', '2001-01'], env());
    expect(empty.json).toMatchObject({ month: '2001-01', total: { requests: 0 }, by_tag: [] });
  });
});
