import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForStatus } from '../batches/support.ts';
import { runCli } from '../support/cli.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { type JobProviders, jobProviderEnv, startJobProviders } from '../upstreams/jobs.ts';
import { startOpenAiModalitiesUpstream } from '../upstreams/openai-modalities.ts';
import type { Upstream } from '../upstreams/types.ts';

/** What an honest gateway's log holds must never turn the audit red. */
describe('the audit on honest use: a free call, and an account with a job, a file and a batch', () => {
  let openai: Upstream;
  let providers: JobProviders;
  let gateway: TestGateway;
  let accountId: string;
  let key: string;

  beforeAll(async () => {
    [openai, providers] = await Promise.all([startOpenAiModalitiesUpstream(), startJobProviders()]);
    gateway = await startTestGateway(
      {
        ...jobProviderEnv(providers.url),
        OPENAI_API_KEY: 'sk-upstream-openai',
        OPENAI_BASE_URL: `${openai.url}/v1`,
        GATEWAY_ALLOW_PRIVATE_URLS: 'true',
        GATEWAY_UPSTREAM_TIMEOUT_MS: '2000',
      },
      { workerIntervalsMs: { jobs: 30, batches: 50 } },
    );
    const account = await json(await gateway.admin('/accounts', { name: 'Honest' }));
    accountId = account.account_id;
    key = account.key;
    await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 10_000, reference: 'funding' });
    // A bystander with spending of its own, which a one-account audit must leave out.
    const other = await json(await gateway.admin('/accounts', { name: 'Bystander' }));
    await gateway.admin(`/accounts/${other.account_id}/top-ups`, { cents: 100, reference: 'funding' });
  });
  afterAll(async () => {
    await gateway?.close();
    await Promise.all([openai?.close(), providers?.close()]);
  });

  it('passes after a free moderation call, which is held at zero', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    const { response } = await client.moderations.create({ input: 'have a nice day' }).withResponse();
    expect(Number(response.headers.get('x-cost-cents'))).toBe(0);
    const audit = await runCli(['audit'], gateway.env);
    expect(audit.stdout).toMatch(/^PASS +caps /m);
    expect(audit.code).toBe(0);
  });

  it('reports no false rows for an account with a job, a file and a batch, audited alone', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    const call = (path: string, body: unknown) =>
      fetch(`${gateway.url}/v1${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const job = await json(await call('/3d/generations', { prompt: 'a wooden chest' }));
    const line = (id: string) =>
      JSON.stringify({
        custom_id: id,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: 'local/echo', messages: [{ role: 'user', content: `hi ${id}` }], max_tokens: 20 },
      });
    const input = await client.files.create({
      file: await toFile(Buffer.from([line('a'), line('b')].join('\n')), 'input.jsonl'),
      purpose: 'batch',
    });
    const batch = await client.batches.create({
      input_file_id: input.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    await waitForStatus(client, batch.id, (s) => s === 'completed');
    await eventually(
      async () =>
        json(
          await fetch(`${gateway.url}/v1/jobs/${job.id}`, { headers: { authorization: `Bearer ${key}` } }),
        ),
      (j) => j.status === 'completed' || j.status === 'failed',
      15_000,
    );

    const audit = await runCli(['audit', '--account', accountId], gateway.env);
    expect(audit.stdout).not.toMatch(/only live/);
    expect(audit.stdout).toMatch(/^PASS +read models /m);
    expect(audit.stdout).toMatch(/^PASS +batch lines +2 charged batch lines/m);
    expect(audit.code).toBe(0);
  });
});
