import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { type JobProviders, jobProviderEnv, startJobProviders } from '../upstreams/jobs.ts';

let providers: JobProviders;
let gateway: TestGateway;
beforeAll(async () => {
  providers = await startJobProviders();
  gateway = await startTestGateway(
    {
      ...jobProviderEnv(providers.url),
      GATEWAY_ALLOW_PRIVATE_URLS: 'true',
      GATEWAY_UPSTREAM_TIMEOUT_MS: '2000',
    },
    { workerIntervalsMs: { jobs: 30 } },
  );
});
afterAll(async () => {
  await gateway?.close();
  await providers?.close();
});

it('ends a job whose provider fails it in words PostgreSQL cannot store, with the failure kept', async () => {
  const account = await json(await gateway.admin('/accounts', { name: 'jobs' }));
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'funding' });
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${gateway.url}/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${account.key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const job = await json(await call('POST', '/3d/generations', { prompt: 'a chest provider-fail-nul' }));
  const ended = await eventually(
    async () => json(await call('GET', `/jobs/${job.id}`)),
    (j) => j.status === 'failed' || j.status === 'completed',
    10_000,
  );
  expect(ended.status).toBe('failed');
  expect(ended.error.message).toBe('The provider failed the job: Mesh \ufffd failed \ufffd');
});
