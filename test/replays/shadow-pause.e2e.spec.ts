import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

// A shadow whose payer cannot pay for its comparisons pauses once, and resumes when money may be back
// (docs/replays.md#paused-shadows). The source model is cheap and the target dear: with `max_tokens` 4000 a hold
// is at least 0.24¢ for a gpt-4o-mini source and 2¢ for its gpt-4o comparison at the batch rate, so a sub-account
// with less than 1¢ left is served its own requests and refused its shadow's comparisons.

let openai: Upstream;
let gateway: TestGateway;
let key: string;
const logged: string[] = [];

const call = async (method: string, path: string, body?: unknown, apiKey = key) => {
  const response = await fetch(`${gateway.url}/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${apiKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await json(response) };
};

/** A chat completion of the sub-account's, once the request log has its bodies (a shadow mirrors from them). */
async function served(apiKey: string, content: string): Promise<string> {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'openai/gpt-4o-mini',
      max_tokens: 4000,
      messages: [{ role: 'user', content }],
    }),
  });
  expect(response.status).toBe(200);
  const id = response.headers.get('x-request-id') as string;
  await eventually(
    async () => (await call('GET', `/requests/${id}`, undefined, apiKey)).body,
    (r) => r.request_body != null && r.response_body != null,
    5000,
  );
  return id;
}

beforeAll(async () => {
  openai = await startOpenAiUpstream();
  gateway = await startTestGateway(
    {
      OPENAI_API_KEY: 'sk-upstream',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      GATEWAY_JUDGE_MODEL: 'off',
    },
    { log: (line) => logged.push(line) },
  );
  const account = await json(await gateway.admin('/accounts', { name: 'shadow payer' }));
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 5000, reference: 'p' });
  key = account.key;
});
afterAll(async () => {
  await gateway?.close();
  await openai?.close();
});

describe('a shadow whose payer is at its spend cap', () => {
  it('pauses once, visibly, tries nothing more, and resumes when the cap is raised', async () => {
    const sub = await call('POST', '/sub-accounts', { name: 'capped customer', spend_cap_cents: 100 });
    expect(sub.status, JSON.stringify(sub.body)).toBe(200);
    const subKey = sub.body.key as string;
    const seed = await served(subKey, 'the seed');
    const created = await call(
      'POST',
      '/replays',
      {
        source_request_id: seed,
        target_model: 'openai/gpt-4o',
        shadow: true,
        sample_rate: 1,
        max_requests: 50,
      },
      subKey,
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.status).toBe('shadowing');
    const id = created.body.id as string;
    const read = async () => (await call('GET', `/replays/${id}`, undefined, subKey)).body;

    expect((await call('PATCH', `/sub-accounts/${sub.body.id}`, { spend_cap_cents: 1 })).status).toBe(200);
    const targetCalls = () =>
      openai.requests.filter(
        (r) => r.path === '/v1/chat/completions' && (r.body as { model?: string }).model === 'gpt-4o',
      ).length;
    const calledBefore = targetCalls();
    await served(subKey, 'refused a comparison');
    const paused = await eventually(read, (r) => r.status === 'paused', 10_000);
    expect(paused.shadow).toMatchObject({
      count: 0,
      paused: {
        reason: 'budget_exceeded',
        message: expect.stringContaining('Spend cap'),
        since: expect.any(Number),
      },
    });

    // More matching requests, served to the sub-account: the paused shadow takes none of them.
    for (let i = 0; i < 5; i++) await served(subKey, `while paused ${i}`);
    expect((await read()).status).toBe('paused');

    expect((await call('PATCH', `/sub-accounts/${sub.body.id}`, { spend_cap_cents: 100 })).status).toBe(200);
    const resumed = await eventually(read, (r) => r.status === 'shadowing', 10_000);
    expect(resumed.shadow.paused).toBeNull();
    await served(subKey, 'compared again');
    const after = await eventually(read, (r) => r.shadow.count >= 1, 10_000);
    expect(after.shadow.count).toBe(1);
    expect(targetCalls() - calledBefore).toBe(1);

    // One pause, one log line for it, none per refused request; one resumption.
    const events = await gateway.runtime.store.readStream(`replay-${id}`);
    expect(
      events.map((e) => e.type).filter((t) => t.startsWith('ShadowP') || t.startsWith('ShadowR')),
    ).toEqual(['ShadowPaused', 'ShadowResumed']);
    expect(events.find((e) => e.type === 'ShadowResumed')?.data).toMatchObject({
      pause: 1,
      reason: 'cap_changed',
    });
    const lines = logged.filter((line) => line.includes(id));
    expect(lines.filter((line) => line.includes('paused'))).toHaveLength(1);
    expect(lines.filter((line) => line.includes('mirroring failed'))).toEqual([]);

    const stopped = await call('DELETE', `/replays/${id}`, undefined, subKey);
    expect(stopped.body).toMatchObject({
      status: 'stopped',
      shadow: { stopped_reason: 'deleted', paused: null },
    });
  });

  it('leaves a log the audit passes', async () => {
    const audit = await runCli(['audit'], gateway.env);
    expect(audit.code, audit.stderr + audit.stdout).toBe(0);
  });
});
