import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../src/db/embedded.ts';
import { dropSchema } from '../support/database.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Json, json } from '../support/json.ts';
import { type ServerProcess, spawnServer } from '../support/server-process.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';
import { api, behave, CHEAP, CHEAPEST, dataset, EXPENSIVE, ended, JUDGE } from './support.ts';

let openai: Upstream;
const THREE = [EXPENSIVE, CHEAP, CHEAPEST];
const CANDIDATE_UPSTREAM = new Set(['gpt-4o', 'gpt-4o-mini', 'gpt-4.1-nano']);

/** Calls the simulator received for the candidates (not the judge) since `from`. */
const candidateCalls = (from: number) =>
  openai.requests
    .slice(from)
    .filter((r) => CANDIDATE_UPSTREAM.has(String((r.body as { model?: unknown } | undefined)?.model))).length;

/** Settled charges per request id of the eval's first run: each must have exactly one. */
async function settlements(pool: pg.Pool, evalId: string): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ request_id: string; n: string }>(
    `SELECT request_id, count(*)::text AS n FROM charges WHERE starts_with(request_id, $1) AND kind = 'settled'
     GROUP BY request_id`,
    [`${evalId}-1-`],
  );
  return new Map(rows.map((r) => [r.request_id, Number(r.n)]));
}

beforeAll(async () => {
  openai = await startOpenAiUpstream();
  behave(openai);
  // Slow enough that a run is caught in the middle: 60 calls, 4 at a time, the slowest 120 ms.
  openai.behave?.('gpt-4o', { delayMs: 60, reply: (text) => String(2 * Number(/Q(\d+)/.exec(text)?.[1])) });
});
afterAll(async () => {
  await openai?.close();
});

const upstreamEnv = () => ({
  OPENAI_API_KEY: 'sk-upstream',
  OPENAI_BASE_URL: `${openai.url}/v1`,
  GATEWAY_JUDGE_MODEL: JUDGE,
});

describe('evals across a restart', () => {
  let first: TestGateway | undefined;
  let second: TestGateway | undefined;
  const schema = `g_${randomBytes(6).toString('hex')}`;
  let dataDir: string;

  afterAll(async () => {
    await first?.close().catch(() => undefined);
    await second?.close();
    await dropSchema(schema);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('a gateway stopped mid-run: the next one resumes, no call made twice, none lost', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gw-evals-'));
    first = await startTestGateway(upstreamEnv(), { schema, dataDir });
    const account = (await (await first.admin('/accounts', { name: 'restarted' })).json()) as Json;
    await first.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'p' });
    const from = openai.requests.length;
    const created = await api(first)(account.key, 'POST', '/evals', {
      name: 'across a restart',
      candidate_models: THREE,
      dataset: dataset(20),
      metric: 'quality',
    });
    const id = created.body.id as string;
    await eventually(
      async () => (await api(first as TestGateway)(account.key, 'GET', `/evals/${id}`)).body,
      (e) => e.calls_done >= 12,
      20_000,
    );
    await first.close();
    first = undefined;
    const mid = openai.requests.length;
    expect(candidateCalls(from)).toBeLessThan(60);

    second = await startTestGateway(upstreamEnv(), { schema, dataDir });
    const e = await ended(second, account.key, id);
    expect(e).toMatchObject({
      status: 'completed',
      items_done: 20,
      calls_done: 60,
      errors: 0,
      winner_model: CHEAP,
    });
    // Every candidate call was made once in all: the second gateway made only the ones the first had not.
    expect(candidateCalls(from)).toBe(60);
    expect(candidateCalls(mid)).toBeLessThan(60);
    const settled = await eventually(
      () => settlements(second?.runtime.database.pool as pg.Pool, id),
      (s) => s.size >= 80,
      5000,
    );
    expect([...settled.keys()].filter((r) => !r.endsWith('judge'))).toHaveLength(60);
    expect([...settled.values()].every((n) => n === 1)).toBe(true);
  });
});

describe('evals across a killed gateway process', () => {
  let server: ServerProcess | undefined;
  let env: Record<string, string>;
  let pool: pg.Pool;
  const schema = `g_${randomBytes(6).toString('hex')}`;
  let dataDir: string;
  const adminToken = `gw-admin-${randomBytes(16).toString('hex')}`;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gw-evals-kill-'));
    env = {
      DATABASE_URL: inject('databaseUrl'),
      GATEWAY_DB_SCHEMA: schema,
      GATEWAY_DATA_DIR: dataDir,
      GATEWAY_ADMIN_TOKEN: adminToken,
      PORT: String(await freePort()),
      ...upstreamEnv(),
    };
    pool = new pg.Pool({ connectionString: inject('databaseUrl'), options: `-c search_path=${schema}` });
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      server.signal('SIGTERM');
      await server.exited;
    }
    await pool?.end();
    await dropSchema(schema);
    await rm(dataDir, { recursive: true, force: true });
  });

  const call = async (key: string, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server?.url}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return json(response);
  };
  const admin = async (path: string, body: unknown) =>
    json(
      await fetch(`${server?.url}/admin${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    );

  it('SIGKILL mid-run: the restarted gateway finishes it; no call is charged twice, no answer is missing', async () => {
    server = await spawnServer(env);
    const account = await admin('/accounts', { name: 'killed' });
    await admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'p' });
    const from = openai.requests.length;
    const created = await call(account.key, 'POST', '/evals', {
      name: 'across a kill',
      candidate_models: THREE,
      dataset: dataset(20),
      metric: 'quality',
    });
    const id = created.id as string;
    await eventually(
      async () => call(account.key, 'GET', `/evals/${id}`),
      (e) => e.calls_done >= 12,
      20_000,
    );
    server.signal('SIGKILL');
    await server.exited;
    const atKill = candidateCalls(from);
    expect(atKill).toBeLessThan(60);

    server = await spawnServer(env);
    const e = await eventually(
      async () => call(account.key, 'GET', `/evals/${id}`),
      (x) => x.status === 'completed' || x.status === 'failed',
      30_000,
    );
    expect(e).toMatchObject({ status: 'completed', items_done: 20, calls_done: 60 });
    const settled = await eventually(
      () => settlements(pool, id),
      (s) => [...s.keys()].filter((r) => !r.endsWith('judge')).length >= 60,
      10_000,
    );
    // Each call charged once: one charged before the kill but not recorded was read back from the request log.
    expect([...settled.keys()].filter((r) => !r.endsWith('judge'))).toHaveLength(60);
    expect([...settled.values()].every((n) => n === 1)).toBe(true);
    // A call cut off by the kill before it was charged may be made again; never more than were in flight.
    expect(candidateCalls(from)).toBeLessThanOrEqual(60 + 4);
    // What the eval says it cost is what was charged, once the judge's charges are projected too.
    const charged = async () => {
      const { rows } = await pool.query<{ cost: string }>(
        `SELECT sum(charged_nanos)::text AS cost FROM charges WHERE starts_with(request_id, $1)`,
        [`${id}-1-`],
      );
      return Number(rows[0]?.cost) / 1e7;
    };
    const cost = await eventually(charged, (c) => Math.abs(c - e.cost_cents) < 1e-9, 10_000);
    expect(cost).toBeCloseTo(e.cost_cents, 9);
  }, 120_000);
});
