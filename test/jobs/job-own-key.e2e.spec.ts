import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { budgetStream, monthOf } from '../../events/budget.ts';
import { START } from '../../events/store.ts';
import { nanosToCents } from '../../src/contracts/money.ts';
import { runCli } from '../support/cli.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { endedHolds } from '../support/holds.ts';
import { type Json, json } from '../support/json.ts';
import { logicalStream } from '../support/logical-events.ts';
import { type JobProviders, jobProviderEnv, MUSIC_BYTES, startJobProviders } from '../upstreams/jobs.ts';

// Jobs on the requester's own provider key (docs/providers.md, Bring your own key): submitted, polled, cancelled and
// charged on it. The operator's Meshy key is `upstream-meshy`, the pool's single credential `default`.
const OWN = 'sk-meshy-own-key-1';
const REFUSED = 'sk-meshy-own-refused';
const THEIRS = 'sk-eleven-sub-account';

let providers: JobProviders;
let gateway: TestGateway;
let accountId: string;
let key: string;

const call = (k: string, method: string, path: string, body?: unknown) =>
  fetch(`${gateway.url}/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${k}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const jobOf = async (k: string, id: string) => json(await call(k, 'GET', `/jobs/${id}`));
const ended = (id: string, k = key) =>
  eventually(
    () => jobOf(k, id),
    (job: Json) => job.status === 'completed' || job.status === 'failed',
    15_000,
  );
/** The provider's calls about Meshy tasks since `from`, as (method, bearer key). */
const meshyCalls = (from: number) =>
  providers.requests
    .slice(from)
    .filter((r) => r.path.startsWith('/openapi/v2/text-to-3d'))
    .map((r) => `${r.method} ${r.headers.authorization?.replace(/^Bearer /, '')}`);
/** Waits until the worker has polled the job's task at the provider at least once. */
const polled = (from: number) =>
  eventually(
    async () => meshyCalls(from).filter((c) => c.startsWith('GET ')).length,
    (n) => n > 0,
    15_000,
  );

async function register(k: string, provider: string, apiKey: string, name: string): Promise<string> {
  const created = await call(k, 'POST', '/provider-keys', { provider, api_key: apiKey, name });
  expect(created.status).toBe(200);
  return (await json(created)).id;
}

/** The settlement of the hold a request made (a job's, by the request that submitted it). */
async function settlementOf(requestId: string) {
  const settled = await eventually(
    async () => {
      const events = await logicalStream(gateway.runtime.store, budgetStream(accountId, monthOf(new Date())));
      const found = events.find((e) => e.type === 'SpendSettled' && e.data.requestId === requestId);
      return found?.data as { chargedNanos: string; charge: Record<string, string> } | undefined;
    },
    (found) => found !== undefined,
    10_000,
  );
  if (!settled) throw new Error(`no settlement for ${requestId}`);
  return settled;
}

/** How the job's hold ended. */
const holdEnd = (requestId: string) => endedHolds(gateway.runtime.database.pool, requestId, 10_000);

beforeAll(async () => {
  providers = await startJobProviders();
  providers.keys.add(OWN).add(THEIRS);
  gateway = await startTestGateway(
    {
      ...jobProviderEnv(providers.url),
      GATEWAY_ALLOW_PRIVATE_URLS: 'true',
      GATEWAY_SECRETS_KEY: randomBytes(32).toString('base64'),
    },
    { workerIntervalsMs: { jobs: 50 } },
  );
  const account = await json(await gateway.admin('/accounts', { name: 'job-own-keys' }));
  accountId = account.account_id;
  key = account.key;
  await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 10_000, reference: 'funding' });
});
afterAll(async () => {
  await gateway?.close();
  await providers?.close();
});

let ownKeyId: string;

it('submits, polls and completes a job on the account’s own key, charged the fee alone', async () => {
  ownKeyId = await register(key, 'meshy', OWN, 'ours');
  providers.pendingPolls = 2;
  const from = providers.requests.length;
  const accepted = await call(key, 'POST', '/3d/generations', { prompt: 'a wooden chest' });
  const { id } = await json(accepted);
  const job = await ended(id);
  expect(job.status).toBe('completed');
  const calls = meshyCalls(from);
  expect(calls.filter((c) => c.startsWith('GET ')).length).toBeGreaterThanOrEqual(3);
  expect(new Set(calls)).toEqual(new Set([`POST ${OWN}`, `GET ${OWN}`]));
  const settled = await settlementOf(accepted.headers.get('x-request-id') ?? '');
  expect(settled.charge).toMatchObject({ discount: 'byok', credential: 'byok:ours' });
  expect(BigInt(settled.charge.passThroughNanos ?? '0')).toBeGreaterThan(0n);
  expect(settled.chargedNanos).toBe(settled.charge.feeNanos);
  expect(job.cost_cents).toBe(nanosToCents(BigInt(settled.chargedNanos)));
});

it('cancels a job at the provider with the own key it was submitted on, and charges the fee on its hold', async () => {
  providers.pendingPolls = 1_000_000;
  const from = providers.requests.length;
  const accepted = await call(key, 'POST', '/3d/generations', { prompt: 'a lamp to cancel' });
  const { id } = await json(accepted);
  await polled(from);
  const cancelled = await json(await call(key, 'DELETE', `/jobs/${id}`));
  expect(cancelled.cancellation).toMatchObject({ after_handoff: true, charge: 'charged', basis: 'hold' });
  expect(meshyCalls(from)).toContain(`DELETE ${OWN}`);
  const settled = await settlementOf(accepted.headers.get('x-request-id') ?? '');
  expect(settled.charge).toMatchObject({ discount: 'byok', credential: 'byok:ours' });
  expect(settled.chargedNanos).toBe(settled.charge.feeNanos);
});

it('fails a job whose own key was removed, naming it, releases its hold, and asks no other key', async () => {
  const from = providers.requests.length;
  const accepted = await call(key, 'POST', '/3d/generations', { prompt: 'a lamp' });
  const { id } = await json(accepted);
  await polled(from);
  expect((await call(key, 'DELETE', `/provider-keys/${ownKeyId}`)).status).toBe(200);
  const job = await ended(id);
  expect(job.status).toBe('failed');
  expect(job.error.message).toContain("your meshy key 'ours' that submitted this job has been removed");
  expect(await holdEnd(accepted.headers.get('x-request-id') ?? '')).toEqual(['failed']);
  expect(meshyCalls(from).filter((c) => !c.endsWith(OWN))).toEqual([]);
});

it('fails a job the provider refuses on the own key when the account allows no fallback', async () => {
  await register(key, 'meshy', REFUSED, 'revoked');
  const from = providers.requests.length;
  const accepted = await call(key, 'POST', '/3d/generations', { prompt: 'a refused chair' });
  const job = await ended((await json(accepted)).id);
  expect(job.status).toBe('failed');
  expect(job.error.message).toContain('Invalid API key');
  // Read as a served call's refusal by its provider reads (docs/api.md, "Upstream errors").
  expect(job.error).toMatchObject({ type: 'invalid_request_error', code: 400 });
  expect(job.error.message).toMatch(/^The provider refused the request: meshy\//);
  expect(meshyCalls(from)).toEqual([`POST ${REFUSED}`]);
  expect(await holdEnd(accepted.headers.get('x-request-id') ?? '')).toEqual(['failed']);
});

it("serves the job on the operator's pool, charged in full, once the account allows fallback", async () => {
  await gateway.admin(`/accounts/${accountId}/settings`, { byok_fallback: true });
  providers.pendingPolls = 1;
  const from = providers.requests.length;
  const accepted = await call(key, 'POST', '/3d/generations', { prompt: 'a chair on the pool' });
  const job = await ended((await json(accepted)).id);
  expect(job.status).toBe('completed');
  const calls = meshyCalls(from);
  expect(calls.slice(0, 2)).toEqual([`POST ${REFUSED}`, 'POST upstream-meshy']);
  expect(new Set(calls.slice(2))).toEqual(new Set(['GET upstream-meshy']));
  const settled = await settlementOf(accepted.headers.get('x-request-id') ?? '');
  expect(settled.charge).toMatchObject({ discount: 'none', credential: 'default' });
  expect(BigInt(settled.chargedNanos)).toBe(
    BigInt(settled.charge.passThroughNanos ?? '0') + BigInt(settled.charge.feeNanos ?? '0'),
  );
});

it('runs a sub-account’s job on its own key, a provider that answers at once included', async () => {
  await gateway.admin(`/accounts/${accountId}/settings`, { byok_sub_accounts: true });
  const sub = await json(
    await call(key, 'POST', '/sub-accounts', { name: 'customer', spend_cap_cents: 500 }),
  );
  await register(sub.key, 'elevenlabs', THEIRS, 'theirs');
  const from = providers.requests.length;
  const accepted = await call(sub.key, 'POST', '/audio/music', { prompt: 'a calm tune', duration: 10 });
  const job = await ended((await json(accepted)).id, sub.key);
  expect(job.status).toBe('completed');
  expect(await (await fetch(job.result_url)).text()).toBe(MUSIC_BYTES);
  const music = providers.requests.slice(from).filter((r) => r.path === '/v1/music');
  expect(music.map((r) => r.headers['xi-api-key'])).toEqual([THEIRS]);
  const settled = await settlementOf(accepted.headers.get('x-request-id') ?? '');
  expect(settled.charge).toMatchObject({ discount: 'byok', credential: 'byok:theirs' });
  expect(settled.chargedNanos).toBe(settled.charge.feeNanos);
});

it('keeps the own keys out of the log, and the audit re-prices the jobs’ charges', async () => {
  const log = JSON.stringify(
    (await gateway.runtime.store.readAll(START, { maxCount: 100_000 })).map((e) => e.data),
  );
  for (const secret of [OWN, REFUSED, THEIRS]) expect(log).not.toContain(secret);
  const audit = await runCli(['audit'], gateway.env);
  expect(audit.code, audit.stdout).toBe(0);
});
