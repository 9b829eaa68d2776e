import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/db/embedded.ts';
import { runCli } from '../support/cli.ts';
import { eventually } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { type ServerProcess, spawnServer } from '../support/server-process.ts';

const TOP_UPS = 300;
const amountOf = (i: number) => i + 1;

describe('a gateway killed during a burst of top-ups', () => {
  let dataDir: string;
  let env: Record<string, string>;
  let server: ServerProcess;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gw-crash-'));
    env = {
      GATEWAY_DATA_DIR: dataDir,
      PORT: String(await freePort()),
      DATABASE_URL: '',
      GATEWAY_ADMIN_TOKEN: 'gw-admin-crash-test-token-0123456789',
    };
    server = await spawnServer(env);
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  const topUp = (accountId: string, i: number) =>
    fetch(`${server.url}/admin/accounts/${accountId}/top-ups`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.GATEWAY_ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ cents: amountOf(i), reference: `burst-${i}` }),
    }).then(async (r) => (r.ok ? ((await json(r)) as { credited: boolean }) : undefined));

  it('loses no acknowledged top-up, duplicates none, and projects what a rebuild from zero projects', async () => {
    const key = server.stdout.find((line) => line.startsWith('sk-gw-')) as string;
    const accountId = /Demo account (acct_\w+)/.exec(server.stderr())?.[1] as string;

    const acknowledged: number[] = [];
    let killed = false;
    const senders = Array.from({ length: 16 }, async (_, lane) => {
      for (let i = lane; i < TOP_UPS; i += 16) {
        const result = await topUp(accountId, i).catch(() => undefined);
        if (result?.credited) acknowledged.push(i);
        if (!killed && acknowledged.length >= 60) {
          killed = true;
          server.child.kill('SIGKILL');
        }
        if (killed) return;
      }
    });
    await Promise.all(senders);
    await server.exited;
    expect(acknowledged.length).toBeGreaterThanOrEqual(60);

    // The killed gateway left its PostgreSQL running; the next start must take it over.
    server = await spawnServer(env);
    const balance = async () =>
      json(await fetch(`${server.url}/v1/balance`, { headers: { authorization: `Bearer ${key}` } }));

    const status = await eventually(
      async () => (await runCli(['projections', 'status'], env)).json as { lag: number }[],
      (s) => s.every((p) => p.lag === 0),
      5000,
    );
    expect(status.every((p) => p.lag === 0)).toBe(true);
    const before = await snapshot(dataDir);
    const rebuilt = await runCli(['projections', 'rebuild'], env);
    expect(rebuilt.code).toBe(0);
    expect(await snapshot(dataDir)).toEqual(before);

    const recorded = (before.topUps as { reference: string }[]).map((r) =>
      Number(r.reference.slice('burst-'.length)),
    );
    expect(new Set(recorded).size).toBe(recorded.length);
    for (const i of acknowledged) expect(recorded).toContain(i);

    // Every payment is retried by its reference after the restart: each credits exactly once overall.
    const retried = await Promise.all(Array.from({ length: TOP_UPS }, (_, i) => topUp(accountId, i)));
    retried.forEach((result, i) => {
      expect(result?.credited).toBe(!recorded.includes(i));
    });
    const total = 500 + Array.from({ length: TOP_UPS }, (_, i) => amountOf(i)).reduce((a, b) => a + b, 0);
    const final = await eventually(balance, (b) => b.cents === total, 5000);
    expect(final).toEqual({ cents: total, usd: total / 100 });
  });
});

/** Reads the read models straight from the embedded PostgreSQL the gateway manages. */
async function snapshot(dataDir: string): Promise<Record<string, unknown[]>> {
  const password = (await readFile(join(dataDir, 'pg-password'), 'utf8')).trim();
  const port = Number((await readFile(join(dataDir, 'pg', 'postmaster.pid'), 'utf8')).split('\n')[3]);
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'gateway', password, database: 'postgres' });
  await client.connect();
  try {
    await client.query('SET search_path = gateway');
    const read = async (sql: string) => (await client.query(sql)).rows;
    return {
      accounts: await read('SELECT * FROM accounts ORDER BY account_id'),
      apiKeys: await read('SELECT * FROM api_keys ORDER BY key_id'),
      balances: await read('SELECT * FROM balances ORDER BY account_id'),
      topUps: await read('SELECT * FROM top_ups ORDER BY account_id, reference'),
    };
  } finally {
    await client.end();
  }
}
