import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import pg from 'pg';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { freePort } from '../../src/db/embedded.ts';
import { dropSchema } from '../support/database.ts';
import { json } from '../support/json.ts';
import { type ServerProcess, spawnServer } from '../support/server-process.ts';
import { jsonl, waitForStatus } from './support.ts';
import {
  calls,
  chargesOf,
  fundedGateway,
  line,
  openHolds,
  type Sims,
  startSims,
  submit,
} from './upstream-support.ts';

let sims: Sims;
let server: ServerProcess | undefined;
let pool: pg.Pool;
let env: Record<string, string>;
let dataDir: string;
const schema = `g_${randomBytes(6).toString('hex')}`;
const adminToken = `gw-admin-${randomBytes(16).toString('hex')}`;

beforeAll(async () => {
  sims = await startSims();
  dataDir = await mkdtemp(join(tmpdir(), 'gw-upstream-batch-'));
  env = {
    DATABASE_URL: inject('databaseUrl'),
    GATEWAY_DB_SCHEMA: schema,
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_ADMIN_TOKEN: adminToken,
    PORT: String(await freePort()),
    ...sims.env,
  };
  pool = new pg.Pool({ connectionString: inject('databaseUrl'), options: `-c search_path=${schema}` });
});
afterAll(async () => {
  if (server && server.child.exitCode === null) {
    server.signal('SIGTERM');
    await server.exited;
  }
  await pool?.end();
  await sims?.close();
  await dropSchema(schema);
  await rm(dataDir, { recursive: true, force: true });
});

const admin = async (path: string, body: unknown) =>
  json(
    await fetch(`${server?.url}/admin${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );

it('a gateway killed while its upstream batch runs: the next process polls the same batch, submits nothing twice, charges each line once', async () => {
  sims.openai.batches.hold();
  server = await spawnServer(env);
  const account = await admin('/accounts', { name: 'restarted' });
  await admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'p' });
  const client = () => new OpenAI({ apiKey: account.key, baseURL: `${server?.url}/v1`, maxRetries: 0 });
  const created = await submit(client(), [
    line('r1', 'openai/gpt-4o-mini', 'one'),
    line('r2', 'openai/gpt-4o-mini', 'two'),
    line('r3', 'openai/gpt-4o-mini', 'three'),
  ]);
  // The upstream batch is submitted, recorded, and polled at least once before the kill, and the holds read model
  // (which follows the log) shows the lines' holds.
  const deadline = Date.now() + 30_000;
  while (
    calls(sims.openai, 'GET', /^\/v1\/batches\/batch_sim/).length === 0 ||
    (await openHolds(pool, created.id)) < 3
  ) {
    if (Date.now() > deadline)
      throw new Error('the gateway never polled its upstream batch with its 3 holds open');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(await openHolds(pool, created.id)).toBe(3);
  server.signal('SIGKILL');
  await server.exited;
  expect(calls(sims.openai, 'POST', /^\/v1\/batches$/)).toHaveLength(1);

  sims.openai.batches.release();
  server = await spawnServer(env);
  const done = await waitForStatus(client(), created.id, (s) => s === 'completed', 30_000);
  expect(done.request_counts).toEqual({ total: 3, completed: 3, failed: 0 });
  const output = jsonl(await (await client().files.content(done.output_file_id as string)).text());
  expect(output.map((l) => l.custom_id).sort()).toEqual(['r1', 'r2', 'r3']);

  // One upload and one batch upstream in all, no chat call; each line charged once, no hold left open.
  expect(calls(sims.openai, 'POST', /^\/v1\/files$/)).toHaveLength(1);
  expect(calls(sims.openai, 'POST', /^\/v1\/batches$/)).toHaveLength(1);
  expect(calls(sims.openai, 'POST', /^\/v1\/chat\/completions$/)).toHaveLength(0);
  const charges = await chargesOf(pool, created.id);
  expect(charges.map((c) => c.request_id).sort()).toEqual([1, 2, 3].map((n) => `${created.id}-${n}`));
  expect(charges.every((c) => c.discount === 'batch_api')).toBe(true);
  expect(await openHolds(pool, created.id)).toBe(0);
  // The holds recorded before the kill are the ones settled: none was released and made again.
  const { rows } = await pool.query<{ status: string }>(
    `SELECT status FROM holds WHERE starts_with(request_id, $1)`,
    [`${created.id}-`],
  );
  expect(rows.map((r) => r.status)).toEqual(['settled', 'settled', 'settled']);
});

it('a take after a stop releases the holds of the batch that no upstream batch records, and only those', async () => {
  const otherSchema = `g_${randomBytes(6).toString('hex')}`;
  const otherDir = await mkdtemp(join(tmpdir(), 'gw-upstream-stray-'));
  const options = { schema: otherSchema, dataDir: otherDir };
  const first = await fundedGateway(sims.env, options);
  const second: { close(): Promise<void> }[] = [];
  try {
    sims.openai.batches.hold();
    const created = await submit(first.client, [line('h1', 'openai/gpt-4o-mini', 'one')]);
    const db = first.gateway.runtime.database.pool;
    const deadline = Date.now() + 10_000;
    while ((await openHolds(db, created.id)) < 1) {
      if (Date.now() > deadline) throw new Error('the line was never held');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    // A hold the stopped take made and never recorded (the process died between the two).
    const stray = await first.gateway.runtime.spending.reserve(
      { keyId: 'k', accountId: first.accountId, keyHash: '', subAccountId: null },
      { requestId: `${created.id}-2`, tag: null, minNanos: 1000n, maxNanos: 1000n, ttlMs: 48 * 3600 * 1000 },
    );
    await first.gateway.close();
    sims.openai.batches.release();
    const restarted = await fundedGateway(sims.env, options);
    second.push(restarted.gateway);
    const client = new OpenAI({ apiKey: first.key, baseURL: `${restarted.gateway.url}/v1`, maxRetries: 0 });
    const done = await waitForStatus(client, created.id, (s) => s === 'completed', 30_000);
    expect(done.request_counts).toEqual({ total: 1, completed: 1, failed: 0 });
    const { rows } = await restarted.gateway.runtime.database.pool.query<{ hold_id: string; status: string }>(
      `SELECT hold_id, status FROM holds WHERE starts_with(request_id, $1) ORDER BY request_id`,
      [`${created.id}-`],
    );
    expect(rows.find((r) => r.hold_id === stray.holdId)?.status).toBe('failed'); // released, as failed work is
    expect(rows.filter((r) => r.hold_id !== stray.holdId).map((r) => r.status)).toEqual(['settled']);
  } finally {
    sims.openai.batches.release();
    for (const gateway of second) await gateway.close();
    await dropSchema(otherSchema);
    await rm(otherDir, { recursive: true, force: true });
  }
});
