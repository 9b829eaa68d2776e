import type { Provider } from '@pydantic/genai-prices';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import type { Json } from '../support/json.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';
import { api, ended } from './support.ts';

// The dearest model refuses sampling parameters (OpenAI's o-series); the next one takes them, and a short context
// window makes it refuse a long prompt, so that one gateway shows a judge answering and a judge failing.
const JUDGE_WINDOW = 300;
const model = (id: string, input: number, output: number, contextWindow?: number) => ({
  id,
  match: { equals: id },
  prices: { input_mtok: input, output_mtok: output },
  ...(contextWindow === undefined ? {} : { context_window: contextWindow }),
});
const openaiPrices: Provider = {
  id: 'openai',
  name: 'OpenAI',
  api_pattern: 'https://api.openai.com',
  models: [
    model('o1-pro', 150, 600),
    model('gpt-4.1', 2, 8, JUDGE_WINDOW),
    model('gpt-4o-mini', 0.15, 0.6),
    model('gpt-4.1-nano', 0.1, 0.4),
  ],
};
const CANDIDATES = ['openai/gpt-4o-mini', 'openai/gpt-4.1-nano'];

let openai: Upstream;
let gateway: TestGateway;
let call: ReturnType<typeof api>;
let key: string;

beforeAll(async () => {
  openai = await startOpenAiUpstream();
  openai.behave?.('gpt-4o-mini', { reply: () => 'Paris' });
  openai.behave?.('gpt-4.1-nano', { reply: () => 'Lyon' });
  openai.behave?.('gpt-4.1', {
    reply: (prompt) =>
      prompt.includes('Answer A:') ? 'A' : /Answer to grade:\nParis/.test(prompt) ? '1' : '0.25',
  });
  // Only OpenAI's key, and no GATEWAY_JUDGE_MODEL: the judge is the gateway's own choice.
  gateway = await startTestGateway(
    { OPENAI_API_KEY: 'sk-upstream', OPENAI_BASE_URL: `${openai.url}/v1` },
    { catalog: { providers: [openaiPrices] } },
  );
  call = api(gateway);
  const account = (await (await gateway.admin('/accounts', { name: 'judged' })).json()) as Json;
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'p' });
  key = account.key;
});
afterAll(async () => {
  await gateway?.close();
  await openai?.close();
});

async function runEval(dataset: unknown[]): Promise<Json> {
  const created = await call(key, 'POST', '/evals', {
    name: 'capitals',
    candidate_models: CANDIDATES,
    dataset,
    metric: 'quality',
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return ended(gateway, key, created.body.id);
}

describe('the default judge', () => {
  it('is the dearest model that takes sampling parameters, and grades answers without an expected one', async () => {
    const e = await runEval([{ input: 'The capital of France?' }, { input: 'Name the capital of France.' }]);
    expect(e).toMatchObject({ status: 'completed', judge_model: 'openai/gpt-4.1', errors: 0 });
    expect(e.judge_cost_cents).toBeGreaterThan(0);
    const items = await call(key, 'GET', `/evals/${e.id}/items`);
    expect(items.body.data.map((i: Json) => [i.item, i.model, i.grader, i.score])).toEqual([
      [0, 'openai/gpt-4.1-nano', 'judge', 0.25],
      [0, 'openai/gpt-4o-mini', 'judge', 1],
      [1, 'openai/gpt-4.1-nano', 'judge', 0.25],
      [1, 'openai/gpt-4o-mini', 'judge', 1],
    ]);
    expect(e.winner_model).toBe('openai/gpt-4o-mini');
    // The judge's call is logged as served, at temperature 0.
    const judged = await eventually(
      async () => (await call(key, 'GET', `/requests/${e.id}-1-0-0-judge`)).body,
      (r) => r.request_body != null,
      5000,
    );
    expect(judged).toMatchObject({ status: 200, model: 'openai/gpt-4.1' });
    expect(judged.request_body).toMatchObject({ temperature: 0, max_tokens: 16 });
  });

  it('judges a replay too', async () => {
    const chat = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: CANDIDATES[0],
        messages: [{ role: 'user', content: 'Capital of France?' }],
      }),
    });
    expect(chat.status).toBe(200);
    const source = chat.headers.get('x-request-id') as string;
    await eventually(
      async () => (await call(key, 'GET', `/requests/${source}`)).body,
      (r) => r.request_body != null && r.response_body != null,
      5000,
    );
    const replay = await call(key, 'POST', '/replays', {
      source_request_id: source,
      target_model: CANDIDATES[1],
    });
    expect(replay.status, JSON.stringify(replay.body)).toBe(200);
    // The judge always answers A: the orders contradict each other, a tie.
    expect(replay.body).toMatchObject({
      scoring: 'judge',
      score_delta: 0,
      judge: { model: 'openai/gpt-4.1' },
    });
  });

  it('counts a judge call that fails as the answer’s error, not as an ungraded answer', async () => {
    const long = `The capital of France? ${'Take your time. '.repeat(100)}`;
    const e = await runEval([{ input: long }, { input: 'The capital of France?' }]);
    expect(e).toMatchObject({ status: 'completed', judge_model: 'openai/gpt-4.1', errors: 2 });
    const items = await call(key, 'GET', `/evals/${e.id}/items`);
    const failed = items.body.data.filter((i: Json) => i.item === 0);
    expect(failed).toHaveLength(2);
    for (const answer of failed) {
      expect(answer).toMatchObject({ score: null, grader: 'none', output: expect.any(String) });
      expect(answer.error).toMatchObject({ code: 400 });
      expect(answer.error.message).toMatch(
        /^Grading this answer failed: .*context window of openai\/gpt-4\.1/,
      );
    }
    expect(items.body.data.filter((i: Json) => i.item === 1).every((i: Json) => i.error === null)).toBe(true);
    const judged = await call(key, 'GET', `/requests/${e.id}-1-0-0-judge`);
    expect(judged.body.status).toBe(400);
    expect(e.results.map((r: Json) => r.errors)).toEqual([1, 1]);
  });
});
