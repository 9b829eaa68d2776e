import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/db/embedded.ts';
import { runCli } from '../support/cli.ts';
import { eventually } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { type ServerProcess, spawnServer } from '../support/server-process.ts';

describe('npm start on an empty data directory', () => {
  let dataDir: string;
  let env: Record<string, string>;
  let server: ServerProcess;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gw-start-'));
    env = {
      GATEWAY_DATA_DIR: dataDir,
      PORT: String(await freePort()),
      DATABASE_URL: '',
      GATEWAY_ADMIN_TOKEN: '',
    };
    server = await spawnServer(env, 'npm-start');
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null) server.signal('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  const balance = async (key: string) =>
    json(await fetch(`${server.url}/v1/balance`, { headers: { authorization: `Bearer ${key}` } }));

  it('prints a demo key on a line of its own, holding the demo credit', async () => {
    const keys = server.stdout.filter((line) => /^sk-gw-[A-Za-z0-9_-]+$/.test(line));
    expect(keys).toHaveLength(1);
    expect(await balance(keys[0] as string)).toEqual({ cents: 500, usd: 5 });
  });

  it('shows a CLI top-up within a second, crediting one reference once', async () => {
    const key = server.stdout.find((line) => line.startsWith('sk-gw-')) as string;
    const accountId = /Demo account (acct_\w+)/.exec(server.stderr())?.[1] as string;
    const topUp = ['topup', '--account', accountId, '--cents', '250', '--reference', 'card_ch_1'];
    const first = await runCli(topUp, env);
    expect(first.json).toMatchObject({ credited: true });
    const started = Date.now();
    const seen = await eventually(
      () => balance(key),
      (b) => b.cents === 750,
      1000,
    );
    expect(seen).toEqual({ cents: 750, usd: 7.5 });
    expect(Date.now() - started).toBeLessThan(1000);
    expect((await runCli(topUp, env)).json).toMatchObject({ credited: false });
    expect(await balance(key)).toEqual({ cents: 750, usd: 7.5 });
  });

  it('stops gracefully on SIGTERM, taking its PostgreSQL with it, and prints no key on the next start', async () => {
    server.signal('SIGTERM');
    await server.exited;
    // npm exits at once; the gateway under it stops its PostgreSQL, then releases the data directory.
    const files = [join(dataDir, 'pg', 'postmaster.pid'), join(dataDir, 'gateway.pid')];
    const left = await eventually(
      async () => files.filter((file) => existsSync(file)),
      (remaining) => remaining.length === 0,
      15_000,
    );
    expect(left).toEqual([]);
    const again = await spawnServer(env);
    try {
      expect(again.stdout.filter((line) => line.startsWith('sk-gw-'))).toEqual([]);
    } finally {
      again.child.kill('SIGTERM');
      expect(await again.exited).toBe(0);
    }
  });
});
