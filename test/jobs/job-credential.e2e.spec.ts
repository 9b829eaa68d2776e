import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { dropSchema } from '../support/database.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Json, json } from '../support/json.ts';
import { type JobProviders, jobProviderEnv, startJobProviders } from '../upstreams/jobs.ts';

// Two Meshy credentials; `team-a`, first in the pool (the single key before pools), takes no new work, so every job
// is drawn onto `team-b` (the key the simulator accepts) and must stay there.
const schema = `g_${randomBytes(6).toString('hex')}`;
let providers: JobProviders;
let dir: string;
let gateway: TestGateway | undefined;
let key: string;
let accountId: string;
let env: Record<string, string>;

async function startOn(name: string, keys: Array<{ name: string; key: string; weight: number }>) {
  const file = join(dir, name);
  await writeFile(file, JSON.stringify({ providers: { meshy: { keys } } }));
  gateway = await startTestGateway(
    { ...env, GATEWAY_CONFIG: file },
    { schema, dataDir: dir, workerIntervalsMs: { jobs: 50 } },
  );
  return gateway;
}

beforeAll(async () => {
  providers = await startJobProviders();
  dir = await mkdtemp(join(tmpdir(), 'gw-job-credential-'));
  const { MESHY_API_KEY: _single, ...rest } = jobProviderEnv(providers.url);
  env = { ...rest, GATEWAY_ALLOW_PRIVATE_URLS: 'true', GATEWAY_UPSTREAM_TIMEOUT_MS: '2000' };
  const g = await startOn('two.json', [
    { name: 'team-a', key: 'sk-meshy-team-a', weight: 0 },
    { name: 'team-b', key: 'upstream-meshy', weight: 1 },
  ]);
  const account = await json(await g.admin('/accounts', { name: 'job-credentials' }));
  accountId = account.account_id;
  key = account.key;
  await g.admin(`/accounts/${accountId}/top-ups`, { cents: 10_000, reference: 'funding' });
});
afterAll(async () => {
  await gateway?.close();
  await providers?.close();
  await dropSchema(schema);
  await rm(dir, { recursive: true, force: true });
});

const v1 = (path: string, body?: unknown) =>
  fetch(`${gateway?.url}/v1${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
const ended = (id: string) =>
  eventually(
    async () => json(await v1(`/jobs/${id}`)),
    (job: Json) => job.status === 'completed' || job.status === 'failed',
    15_000,
  );
const taskCalls = (id?: string) =>
  providers.requests.filter(
    (r) => r.path.startsWith('/openapi/v2/text-to-3d') && (!id || r.path.endsWith(id)),
  );

it('a job is submitted on the credential drawn for it and polled on it, and its charge names it', async () => {
  providers.pendingPolls = 2;
  const accepted = await json(await v1('/3d/generations', { prompt: 'a wooden chest' }));
  expect(await ended(accepted.id)).toMatchObject({ status: 'completed' });
  const calls = taskCalls();
  expect(calls.filter((r) => r.method === 'GET').length).toBeGreaterThanOrEqual(3);
  expect(new Set(calls.map((r) => r.headers.authorization))).toEqual(new Set(['Bearer upstream-meshy']));
  // The charges read model follows the settlement.
  const db = (gateway as TestGateway).runtime.database.pool;
  const rows = await eventually(
    async () =>
      (
        await db.query<{ credential: string }>(
          `SELECT credential FROM charges WHERE kind = 'settled' AND account_id = $1`,
          [accountId],
        )
      ).rows,
    (found) => found.length > 0,
    5_000,
  );
  expect(rows.map((r) => r.credential)).toEqual(['team-b']);
});

it('a job whose credential the operator removed fails naming it, releases its hold, and asks no other key', async () => {
  providers.pendingPolls = 1_000_000;
  const before = providers.requests.length; // the only job in flight from here on
  const accepted = await json(await v1('/3d/generations', { prompt: 'a lamp' }));
  // Submitted on team-b and polled at least once before the restart.
  const polled = await eventually(
    async () =>
      providers.requests.slice(before).filter((r) => r.method === 'GET' && r.path.includes('/text-to-3d/'))
        .length,
    (n) => n > 0,
    15_000,
  );
  expect(polled).toBeGreaterThan(0);
  await gateway?.close();
  gateway = undefined;
  const seen = providers.requests.length;
  await startOn('one.json', [{ name: 'team-a', key: 'sk-meshy-team-a', weight: 1 }]);
  const job = await ended(accepted.id);
  expect(job.status).toBe('failed');
  expect(job.error.message).toContain(
    "the meshy credential 'team-b' that submitted this job is no longer configured",
  );
  // The read model of holds follows the release.
  const db = (gateway as unknown as TestGateway).runtime.database.pool;
  const open = await eventually(
    async () =>
      (await db.query(`SELECT 1 FROM holds WHERE account_id = $1 AND status = 'open'`, [accountId])).rows,
    (rows) => rows.length === 0,
    5_000,
  );
  expect(open).toEqual([]);
  expect(providers.requests.slice(seen).filter((r) => r.path.startsWith('/openapi/'))).toEqual([]);
});
