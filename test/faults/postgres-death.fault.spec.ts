import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../src/db/embedded.ts';
import { runCli } from '../support/cli.ts';
import { dropSchema } from '../support/database.ts';
import { eventually } from '../support/gateway.ts';
import { type ServerProcess, spawnServer } from '../support/server-process.ts';

const LANES = 24;
/** 200s the clients see before each kill, and after the last one. */
const OK_BETWEEN_KILLS = 100;
/**
 * No request may take longer than this to be answered, outage or not: a refused one is answered at once, and a
 * settlement waits at most 30 s for the database (src/billing/spending.ts).
 */
const REQUEST_BOUND_MS = 35_000;
/** The gateway serves again within this long of losing its database. */
const RECOVERY_BOUND_MS = 30_000;
const BURST_DEADLINE_MS = 120_000;
const LONG_OUTAGE_MS = 10_000;
const ADMIN_TOKEN = 'gw-admin-pg-death-test-token-0123456789';

interface Outcome {
  /** 'stream-503': a stream that ended with a 503 error chunk instead of its end; 'broken': with neither. */
  status: number | 'error' | 'broken' | `stream-${number}`;
  retryAfter: string | null;
  requestId: string | null;
  errorType?: string;
  startedAt: number;
  endedAt: number;
}

type Query = <Row extends pg.QueryResultRow>(sql: string) => Promise<Row[]>;

let server: ServerProcess | undefined;
afterEach(async () => {
  if (server && server.child.exitCode === null && server.child.signalCode === null) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  server = undefined;
});

describe('PostgreSQL lost during a burst of chat requests', () => {
  let dataDir: string;
  afterAll(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('embedded: the gateway restarts its killed postmaster, answers 503 meanwhile, and keeps every charge', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gw-pg-death-'));
    const env = {
      GATEWAY_DATA_DIR: dataDir,
      PORT: String(await freePort()),
      DATABASE_URL: '',
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      GATEWAY_DEMO_CREDIT_CENTS: '1000000',
    };
    const gateway = await spawnServer(env);
    server = gateway;
    const key = gateway.stdout.find((line) => line.startsWith('sk-gw-')) as string;
    const accountId = /Demo account (acct_\w+)/.exec(gateway.stderr())?.[1] as string;
    expect(key).toBeDefined();
    const query: Query = (sql) => embeddedQuery(dataDir, sql);

    const killed: number[] = [];
    const killPostmaster = async () => {
      const pid = await postmasterPid(dataDir);
      // Never 0 (or negative): process.kill would signal this test's own process group.
      expect(pid).toBeGreaterThan(0);
      expect(killed).not.toContain(pid);
      killed.push(pid);
      process.kill(pid, 'SIGKILL');
    };
    // What the OOM killer does: one backend dies, and the postmaster ends all the others and recovers by itself.
    const killBackend = async () => {
      const [backend] = await query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() LIMIT 1`,
      );
      expect(backend?.pid).toBeGreaterThan(0);
      process.kill(backend?.pid as number, 'SIGKILL');
    };
    // Longer than a settlement's ordinary retries: the postmaster is killed again as soon as it is back.
    const longOutage = async () => {
      const until = Date.now() + LONG_OUTAGE_MS;
      while (Date.now() < until) {
        const pid = await postmasterPid(dataDir).catch(() => 0);
        try {
          if (pid > 0) process.kill(pid, 'SIGKILL');
        } catch {
          // Not running between two attempts to start it.
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const faults = [killPostmaster, killBackend, killPostmaster, longOutage];
    const outcomes = await burst(gateway, key, accountId, faults);
    expect(gateway.stderr().split('embedded PostgreSQL restarted').length - 1).toBeGreaterThanOrEqual(3);
    await verify('postgres-death', gateway, env, accountId, outcomes, query);

    // The restarted server is still the gateway's own: a graceful stop takes it down too.
    const restarted = await postmasterPid(dataDir);
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toBe(0);
    expect(() => process.kill(restarted, 0)).toThrow();
  });

  it('external: the gateway reconnects after its connections are cut, answers 503 meanwhile, and keeps every charge', async () => {
    const tag = randomBytes(6).toString('hex');
    const applicationName = `gw_fault_${tag}`;
    const schema = `fault_${tag}`;
    const url = new URL(inject('databaseUrl'));
    url.searchParams.set('application_name', applicationName);
    const env = {
      GATEWAY_DATA_DIR: await mkdtemp(join(tmpdir(), 'gw-pg-cut-')),
      PORT: String(await freePort()),
      DATABASE_URL: url.toString(),
      GATEWAY_DB_SCHEMA: schema,
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
    };
    const query: Query = (sql) => externalQuery(sql.replaceAll('gateway.', `${schema}.`));
    try {
      const gateway = await spawnServer(env);
      server = gateway;
      const created = await admin(gateway, '/admin/accounts', { name: 'fault' });
      const { account_id: accountId, key } = (await created.json()) as { account_id: string; key: string };
      expect(
        (
          await admin(gateway, `/admin/accounts/${accountId}/top-ups`, {
            cents: 1_000_000,
            reference: 'fault',
          })
        ).status,
      ).toBe(200);

      const cut = async () => {
        const [row] = await externalQuery<{ cut: string }>(
          `SELECT count(pg_terminate_backend(pid)) AS cut FROM pg_stat_activity WHERE application_name = '${applicationName}'`,
        );
        expect(Number(row?.cut)).toBeGreaterThan(0);
      };
      const outcomes = await burst(gateway, key, accountId, [cut, cut]);
      await verify('postgres-cut', gateway, env, accountId, outcomes, query);
    } finally {
      await dropSchema(schema);
      await rm(env.GATEWAY_DATA_DIR, { recursive: true, force: true });
    }
  });
});

function admin(gateway: ServerProcess, path: string, body?: unknown): Promise<Response> {
  return fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${ADMIN_TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/**
 * Concurrent chat requests from LANES clients; the next of `faults` runs each time OK_BETWEEN_KILLS more 200s have
 * been seen, and the burst ends OK_BETWEEN_KILLS 200s after the last one.
 */
async function burst(
  gateway: ServerProcess,
  key: string,
  accountId: string,
  faults: (() => Promise<void>)[],
): Promise<{ outcomes: Outcome[]; kills: number[] }> {
  // The burst is far above the default requests-per-minute limit; 429s are not what is measured here.
  expect(
    (await admin(gateway, `/admin/accounts/${accountId}/settings`, { rate_limit_rpm: 1_000_000 })).status,
  ).toBe(200);
  const outcomes: Outcome[] = [];
  const kills: number[] = [];
  let okSinceKill = 0;
  let killing = false;
  const deadline = Date.now() + BURST_DEADLINE_MS;
  const going = () =>
    Date.now() < deadline &&
    gateway.child.exitCode === null &&
    !(kills.length === faults.length && okSinceKill >= OK_BETWEEN_KILLS);
  const lanes = Array.from({ length: LANES }, async (_, lane) => {
    for (let i = 0; going(); i++) {
      // A quarter of the clients stream their answers.
      const outcome = await chat(gateway.url, key, `lane ${lane} request ${i}`, lane % 4 === 0);
      outcomes.push(outcome);
      if (outcome.status === 200 && outcome.startedAt > (kills.at(-1) ?? 0)) okSinceKill++;
      if (!killing && kills.length < faults.length && okSinceKill >= OK_BETWEEN_KILLS) {
        killing = true;
        kills.push(Date.now());
        okSinceKill = 0;
        await faults[kills.length - 1]?.();
        killing = false;
      }
      // Clients wait briefly after a 503, as told, so the outage is measured rather than hammered.
      if (outcome.status === 503) await new Promise((r) => setTimeout(r, 100));
    }
  });
  await Promise.all(lanes);
  return { outcomes, kills };
}

/**
 * One chat request, streamed or not. A stream counts as a 200 only when it reached `[DONE]` (the gateway makes the
 * charge durable before it sends the end); a 200 whose stream broke off is reported as status 'broken'.
 */
async function chat(url: string, key: string, content: string, stream: boolean): Promise<Outcome> {
  const startedAt = Date.now();
  try {
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'local/echo',
        max_tokens: 16,
        stream,
        messages: [{ role: 'user', content }],
      }),
      signal: AbortSignal.timeout(REQUEST_BOUND_MS),
    });
    const text = await response.text();
    const streamError = /^data: (\{"error".*)$/m.exec(text)?.[1];
    const streamStatus = streamError
      ? (`stream-${(JSON.parse(streamError) as { error: { code: number } }).error.code}` as const)
      : text.includes('data: [DONE]')
        ? response.status
        : 'broken';
    return {
      status: stream && response.status === 200 ? streamStatus : response.status,
      retryAfter: response.headers.get('retry-after'),
      requestId: response.headers.get('x-request-id'),
      errorType:
        response.status === 200 ? undefined : (JSON.parse(text) as { error?: { type?: string } }).error?.type,
      startedAt,
      endedAt: Date.now(),
    };
  } catch (error) {
    return {
      status: 'error',
      retryAfter: null,
      requestId: null,
      errorType: String(error),
      startedAt,
      endedAt: Date.now(),
    };
  }
}

/** What must hold after the burst, then the FAULTS line. */
async function verify(
  name: string,
  gateway: ServerProcess,
  env: Record<string, string>,
  accountId: string,
  { outcomes, kills }: { outcomes: Outcome[]; kills: number[] },
  query: Query,
): Promise<void> {
  expect(gateway.child.exitCode).toBeNull();
  expect(gateway.child.signalCode).toBeNull();

  const ok = outcomes.filter((o) => o.status === 200);
  const unavailable = outcomes.filter((o) => o.status === 503);
  // A stream whose charge could not be made durable in time ends with a 503 error chunk, not as a success.
  const streamErrors = outcomes.filter((o) => o.status === 'stream-503');
  const other = outcomes.filter((o) => o.status !== 200 && o.status !== 503 && o.status !== 'stream-503');
  const slowest = Math.max(...outcomes.map((o) => o.endedAt - o.startedAt));
  // Per fault: the last 503 of its window (not one the next fault caused: those end after it began), then the
  // first 200 asked for after that one was answered.
  const recoveries = kills.map((at, k) => {
    const until = kills[k + 1] ?? Number.POSITIVE_INFINITY;
    const refused = unavailable.filter((o) => o.startedAt >= at && o.endedAt < until);
    const lastRefused = Math.max(at, ...refused.map((o) => o.endedAt));
    return Math.min(...ok.filter((o) => o.startedAt >= lastRefused).map((o) => o.endedAt)) - at;
  });
  const recoveredMs = Math.max(...recoveries);
  expect(other, JSON.stringify(other.slice(0, 5))).toEqual([]);
  expect(unavailable.filter((o) => o.retryAfter === null || o.errorType !== 'api_error')).toEqual([]);
  expect(slowest).toBeLessThan(REQUEST_BOUND_MS);
  expect(recoveredMs).toBeLessThan(RECOVERY_BOUND_MS);

  // The live state follows the log again: a key issued now authenticates at once.
  const issued = await admin(gateway, `/admin/accounts/${accountId}/keys`);
  expect(issued.status).toBe(200);
  const { key: newKey } = (await issued.json()) as { key: string };
  const balance = await fetch(`${gateway.url}/v1/balance`, {
    headers: { authorization: `Bearer ${newKey}` },
  });
  expect(balance.status).toBe(200);

  // The projection runner took its lease again by itself: every read model reaches the end of the log (read
  // here without the CLI, which would catch the projections up itself).
  const behind = await eventually(
    async () =>
      Number(
        (
          await query<{ behind: string }>(
            `SELECT count(*) AS behind FROM gateway.projection_checkpoints
             WHERE position IS DISTINCT FROM (SELECT position FROM gateway.events
                                              ORDER BY transaction_id DESC, position DESC LIMIT 1)`,
          )
        )[0]?.behind,
      ),
    (n) => n === 0,
    20_000,
  );
  expect(behind).toBe(0);

  const settled = new Map(
    (
      await query<{ request_id: string; settles: string }>(
        `SELECT data->>'requestId' AS request_id, count(*) AS settles FROM gateway.events
         WHERE type = 'SpendSettled' GROUP BY 1`,
      )
    ).map((r) => [r.request_id, Number(r.settles)]),
  );
  const lost = ok.filter((o) => settled.get(o.requestId as string) !== 1);
  const doubled = [...settled.values()].filter((count) => count > 1).length;
  const charged503 = unavailable.filter((o) => o.requestId && settled.has(o.requestId)).length;
  expect(lost).toEqual([]);
  expect(doubled).toBe(0);

  // The auditor rebuilds every read model from the log and compares it with the live one, among its checks.
  const audit = await runCli(['audit'], env);
  expect(audit.code, audit.stdout + audit.stderr).toBe(0);

  console.log(
    `FAULTS ${name} kills=${kills.length} requests=${outcomes.length} ok=${ok.length} ` +
      `unavailable_503=${unavailable.length} stream_503=${streamErrors.length} other=${other.length} ` +
      `slowest_ms=${slowest} ` +
      `recovered_ms=${recoveries.join('/')} charges_lost=${lost.length} charges_doubled=${doubled} ` +
      `charged_503=${charged503} audit=${audit.code}`,
  );
}

/** Line 1 of postmaster.pid is the postmaster's pid, line 4 its port. */
async function postmasterPid(dataDir: string): Promise<number> {
  return Number((await readFile(join(dataDir, 'pg', 'postmaster.pid'), 'utf8')).split('\n')[0]);
}

async function embeddedQuery<Row extends pg.QueryResultRow>(dataDir: string, sql: string): Promise<Row[]> {
  const password = (await readFile(join(dataDir, 'pg-password'), 'utf8')).trim();
  const port = Number((await readFile(join(dataDir, 'pg', 'postmaster.pid'), 'utf8')).split('\n')[3]);
  return run(
    new pg.Client({ host: '127.0.0.1', port, user: 'gateway', password, database: 'postgres' }),
    sql,
  );
}

function externalQuery<Row extends pg.QueryResultRow>(sql: string): Promise<Row[]> {
  return run(new pg.Client({ connectionString: inject('databaseUrl') }), sql);
}

async function run<Row extends pg.QueryResultRow>(client: pg.Client, sql: string): Promise<Row[]> {
  await client.connect();
  try {
    return (await client.query<Row>(sql)).rows;
  } finally {
    await client.end();
  }
}
