import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { dropSchema } from '../support/database.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { jsonl, waitForStatus } from './support.ts';
import {
  type Funded,
  fundedGateway,
  line,
  openHolds,
  type Sims,
  startSims,
  submit,
} from './upstream-support.ts';

// Two OpenAI credentials; `team-a`, first in the pool (the single key before pools), takes no new work, so every
// upstream batch is drawn onto `team-b` and must stay there.
const schema = `g_${randomBytes(6).toString('hex')}`;
let sims: Sims;
let dir: string;
let funded: Funded;
let restarted: TestGateway | undefined;
let running: TestGateway | undefined;
let env: Record<string, string>;

async function configWith(name: string, keys: Array<{ name: string; key: string; weight: number }>) {
  const file = join(dir, name);
  const base = `${sims.openai.url}/v1`;
  await writeFile(file, JSON.stringify({ providers: { openai: { base_url: base, keys } } }));
  return file;
}

beforeAll(async () => {
  sims = await startSims();
  dir = await mkdtemp(join(tmpdir(), 'gw-batch-credential-'));
  const { OPENAI_API_KEY: _single, ...rest } = sims.env;
  env = rest;
  const config = await configWith('two.json', [
    { name: 'team-a', key: 'sk-team-a', weight: 0 },
    { name: 'team-b', key: 'sk-team-b', weight: 1 },
  ]);
  funded = await fundedGateway({ ...env, GATEWAY_CONFIG: config }, { schema, dataDir: dir });
  running = funded.gateway;
});
afterAll(async () => {
  sims?.openai.batches.release();
  await running?.close();
  await sims?.close();
  await dropSchema(schema);
  await rm(dir, { recursive: true, force: true });
});

it('an upstream batch is created, polled and its results fetched on the credential drawn for it, whose name its charges carry', async () => {
  const created = await submit(funded.client, [
    line('c1', 'openai/gpt-4o-mini', 'one'),
    line('c2', 'openai/gpt-4o-mini', 'two'),
  ]);
  const done = await waitForStatus(funded.client, created.id, (s) => s === 'completed', 30_000);
  expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
  const paths = sims.openai.requests.map((r) => `${r.method} ${r.path.replace(/sim\d+/, 'sim…')}`);
  // Upload, creation, at least one poll and the results download all happened, each with team-b's key.
  for (const call of [
    'POST /v1/files',
    'POST /v1/batches',
    'GET /v1/batches/batch_sim…',
    'GET /v1/files/file-sim…/content',
  ])
    expect(paths).toContain(call);
  // The only upstream batch so far: every call about it, and none with another key.
  const about = sims.openai.requests.filter((r) => /^\/v1\/(batches|files)/.test(r.path));
  expect(new Set(about.map((r) => r.headers.authorization))).toEqual(new Set(['Bearer sk-team-b']));
  // The charges read model follows the settlements.
  const db = funded.gateway.runtime.database.pool;
  const rows = await eventually(
    async () =>
      (
        await db.query<{ credential: string }>(
          `SELECT credential FROM charges WHERE kind = 'settled' AND starts_with(request_id, $1)`,
          [`${created.id}-`],
        )
      ).rows,
    (found) => found.length === 2,
    5_000,
  );
  expect(rows.map((r) => r.credential)).toEqual(['team-b', 'team-b']);
});

it('an upstream batch whose credential the operator removed fails with that credential named and releases its holds, asking no other key', async () => {
  sims.openai.batches.hold();
  const posts = () => sims.openai.requests.filter((r) => r.method === 'POST' && r.path === '/v1/batches');
  // Counted before the submission: the worker may send the batch upstream before `submit` returns.
  const before = posts().length;
  const created = await submit(funded.client, [line('g1', 'openai/gpt-4o-mini', 'gone')]);
  const db = funded.gateway.runtime.database.pool;
  const deadline = Date.now() + 20_000;
  while (posts().length === before || (await openHolds(db, created.id)) < 1) {
    if (Date.now() > deadline) throw new Error('the upstream batch was never submitted');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  await funded.gateway.close();
  running = undefined;
  const seen = sims.openai.requests.length;

  // Restarted with team-b gone from the config: team-a alone remains, and must not be asked about team-b's batch.
  const config = await configWith('one.json', [{ name: 'team-a', key: 'sk-team-a', weight: 1 }]);
  restarted = await startTestGateway(
    { ...env, GATEWAY_CONFIG: config },
    { schema, dataDir: dir, workerIntervalsMs: { batches: 50 } },
  );
  running = restarted;
  const client = new OpenAI({ apiKey: funded.key, baseURL: `${restarted.url}/v1`, maxRetries: 0 });
  const done = await waitForStatus(client, created.id, (s) => s === 'completed', 30_000);
  expect(done.request_counts).toEqual({ total: 1, completed: 0, failed: 1 });
  const errors = jsonl(await (await client.files.content(done.error_file_id as string)).text());
  expect(errors[0]?.response?.body?.error?.message ?? errors[0]?.error?.message).toContain(
    "the openai credential 'team-b' that submitted this batch is no longer configured",
  );
  const after = restarted.runtime.database.pool;
  expect(
    await eventually(
      () => openHolds(after, created.id),
      (n) => n === 0,
      5_000,
    ),
  ).toBe(0);
  expect(sims.openai.requests.slice(seen).filter((r) => r.path.startsWith('/v1/batches'))).toEqual([]);
});
