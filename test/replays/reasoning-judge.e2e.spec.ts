import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Json, json } from '../support/json.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

const SOURCE = 'openai/gpt-4o-mini';
const TARGET = 'openai/gpt-4.1-nano';
// A reasoning model: its reasoning comes out of the output limit before its answer, as on OpenAI's API.
const JUDGE = 'openai/o3';

let openai: Upstream;
let gateway: TestGateway;
let key: string;

const call = async (method: string, path: string, body?: unknown) =>
  json(
    await fetch(`${gateway.url}/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );

beforeAll(async () => {
  openai = await startOpenAiUpstream();
  openai.behave?.('gpt-4.1-nano', { reply: () => 'a much better answer' });
  // The judge names the position of the better answer, whichever order it is shown in.
  openai.behave?.('o3', {
    reply: (prompt) => (/Answer A:\na much better answer/.test(prompt) ? 'A' : 'B'),
  });
  gateway = await startTestGateway({
    OPENAI_API_KEY: 'sk-upstream',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    GATEWAY_JUDGE_MODEL: JUDGE,
  });
  const account = await json(await gateway.admin('/accounts', { name: 'reasoning judge' }));
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 5000, reference: 'p' });
  key = account.key;
});
afterAll(async () => {
  await gateway?.close();
  await openai?.close();
});

describe('a reasoning model as the judge', () => {
  it('is given room to reason before its verdict, so its verdict counts', async () => {
    const source = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: SOURCE, messages: [{ role: 'user', content: 'judge this one' }] }),
    });
    const id = source.headers.get('x-request-id') as string;
    await eventually(
      () => call('GET', `/requests/${id}`),
      (r) => r.request_body != null && r.response_body != null,
      5000,
    );

    const replay = await call('POST', '/replays', { source_request_id: id, target_model: TARGET });
    expect(replay).toMatchObject({ status: 'completed', scoring: 'judge', judge: { model: JUDGE } });
    // Both orders named the target: with no room to reason, the judge would have answered nothing (a tie, 0).
    expect(replay.score_delta).toBe(1);
    const judged = openai.requests.filter((r) => (r.body as Json)?.model === 'o3');
    expect(judged).toHaveLength(2);
    for (const request of judged) {
      const body = request.body as Json;
      expect(body.max_completion_tokens ?? body.max_tokens).toBeGreaterThan(1000);
      expect(body.temperature).toBeUndefined();
    }
  });
});
