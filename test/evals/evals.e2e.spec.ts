import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/webhooks/signing.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import type { Json } from '../support/json.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';
import { type Receiver, startReceiver } from '../webhooks/support.ts';
import {
  api,
  behave,
  CHEAP,
  CHEAPEST,
  chargedCents,
  chargesByPrefix,
  dataset,
  EXPENSIVE,
  ended,
  JUDGE,
  question,
  SLOW,
  sum,
} from './support.ts';

let openai: Upstream;
let gateway: TestGateway;
let receiver: Receiver;
let call: ReturnType<typeof api>;
let key: string;
let otherKey: string;
let accountId: string;
/** How far the gateway's clock runs ahead of real time: the router test moves it past the router's 5 s cache. */
let clockAheadMs = 0;

const THREE = [EXPENSIVE, CHEAP, CHEAPEST];

async function runEval(body: Record<string, unknown>, apiKey = key): Promise<Json> {
  const created = await call(apiKey, 'POST', '/evals', body);
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return ended(gateway, apiKey, created.body.id);
}

beforeAll(async () => {
  openai = await startOpenAiUpstream();
  behave(openai);
  gateway = await startTestGateway(
    {
      OPENAI_API_KEY: 'sk-upstream',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      GATEWAY_JUDGE_MODEL: JUDGE,
      GATEWAY_ALLOW_PRIVATE_URLS: 'true',
    },
    { workerIntervalsMs: { webhooks: 50 }, clock: () => new Date(Date.now() + clockAheadMs) },
  );
  call = api(gateway);
  receiver = await startReceiver();
  for (const name of ['evaluator', 'other']) {
    const account = (await (await gateway.admin('/accounts', { name })).json()) as Json;
    await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 100_000, reference: 'p' });
    await gateway.admin(`/accounts/${account.account_id}/settings`, { rate_limit_rpm: 100_000 });
    if (name === 'evaluator') {
      key = account.key;
      accountId = account.account_id;
      await gateway.admin(`/accounts/${account.account_id}/webhook-endpoint`, { url: receiver.url });
    } else otherKey = account.key;
  }
});
afterAll(async () => {
  await gateway?.close();
  await openai?.close();
  await receiver?.close();
});

describe('evals: three candidates, twenty items, one winner per metric', () => {
  let qualityEval: Json;

  it('quality: two candidates answer all twenty right — a tie, resolved to the cheaper, with its figures', async () => {
    const e = await runEval({
      name: 'sums',
      candidate_models: THREE,
      dataset: dataset(20),
      metric: 'quality',
    });
    qualityEval = e;
    expect(e).toMatchObject({
      object: 'eval',
      status: 'completed',
      metric: 'quality',
      model_alias: `eval:${e.id}`,
      candidate_models: THREE,
      items_done: 20,
      items_total: 20,
      calls_done: 60,
      calls_total: 60,
      errors: 0,
      winner_model: CHEAP,
      tie: true,
      tied_models: [EXPENSIVE, CHEAP],
      judge_model: JUDGE,
      tag: 'eval',
    });
    expect(e.id).toMatch(/^evl_[0-9a-f]{24}$/);
    const [expensive, cheap, cheapest] = e.results as Json[];
    expect(expensive).toMatchObject({
      model: EXPENSIVE,
      n: 20,
      scored: 20,
      errors: 0,
      mean_score: 1,
      interval: 'wilson',
    });
    expect(cheap).toMatchObject({ model: CHEAP, n: 20, mean_score: 1, interval: 'wilson', eligible: true });
    // The cheapest model is wrong: graded by the judge at ¼ each, a mean with a normal interval, far below.
    expect(cheapest).toMatchObject({
      model: CHEAPEST,
      mean_score: 0.25,
      interval: 'normal',
      eligible: false,
    });
    expect(expensive.score_interval[0]).toBeLessThan(0.9);
    expect(expensive.score_interval[1]).toBe(1);
    expect(cheapest.judge_cost_cents).toBeGreaterThan(0);
    expect(expensive.judge_cost_cents).toBe(0);
    // The cheap model answered 120 ms late every time.
    expect(cheap.latency_p50_ms).toBeGreaterThanOrEqual(120);
    expect(cheap.latency_p95_ms).toBeGreaterThanOrEqual(cheap.latency_p50_ms);

    // Each call is charged under its own id; each candidate's cost is what its calls were charged.
    const charges = await chargesByPrefix(gateway, `${e.id}-1-`, 80);
    const ofModel = (m: number) => sum([...charges].filter(([id]) => id.endsWith(`-${m}`)).map(([, n]) => n));
    expect([...charges.keys()].filter((id) => !id.includes('judge'))).toHaveLength(60);
    expect(expensive.cost_cents).toBeCloseTo(Number(ofModel(0)) / 1e7, 9);
    expect(cheap.cost_cents).toBeCloseTo(Number(ofModel(1)) / 1e7, 9);
    expect(cheapest.judge_cost_cents).toBeCloseTo(
      Number(sum([...charges].filter(([id]) => id.endsWith('-2-judge')).map(([, n]) => n))) / 1e7,
      9,
    );
    expect(e.cost_cents).toBeCloseTo(Number(sum(charges.values())) / 1e7, 9);
    expect(e.result_cost_cents).toBe(e.cost_cents);
  });

  it('lists every answer with its grading: the grader, the judge, its prompt and cost', async () => {
    const e = qualityEval;
    const wrong = await call(key, 'GET', `/evals/${e.id}/items?limit=100&model=${CHEAPEST}`);
    expect(wrong.status).toBe(200);
    expect(wrong.body.data).toHaveLength(20);
    expect(wrong.body.data[3]).toMatchObject({
      object: 'eval.item',
      id: `${e.id}-1-3-2`,
      run: 1,
      item: 3,
      model: CHEAPEST,
      output: 'no idea',
      score: 0.25,
      grader: 'judge',
      judge: { model: JUDGE },
      error: null,
      recovered: false,
    });
    expect(wrong.body.data[3].judge.prompt).toContain('Reference answer:\n6\n\nAnswer to grade:\nno idea');
    expect(wrong.body.data[3].judge.cost_cents).toBeGreaterThan(0);
    const first = await call(key, 'GET', `/evals/${e.id}/items?limit=2`);
    // By item, then model id.
    expect(first.body.data.map((x: Json) => [x.item, x.model, x.grader])).toEqual([
      [0, CHEAPEST, 'judge'],
      [0, EXPENSIVE, 'exact'],
    ]);
    expect(first.body.has_more).toBe(true);
    const next = await call(key, 'GET', `/evals/${e.id}/items?limit=2&after=${first.body.last_id}`);
    expect(next.body.data.map((x: Json) => [x.item, x.model, x.grader])).toEqual([
      [0, CHEAP, 'contains'],
      [1, CHEAPEST, 'judge'],
    ]);
    expect((await call(key, 'GET', `/evals/${e.id}/items?run=2`)).status).toBe(400);
  });

  it('bills each call at the batch rate under the tag eval, and logs it', async () => {
    const e = qualityEval;
    const direct = await call(key, 'POST', '/chat/completions', {
      model: EXPENSIVE,
      messages: [{ role: 'user', content: question(3) }],
    });
    expect(direct.status).toBe(200);
    const [directNanos] = (
      await chargesByPrefix(gateway, direct.headers.get('x-request-id') as string)
    ).values();
    const [evalNanos] = (await chargesByPrefix(gateway, `${e.id}-1-3-0`)).values();
    expect(directNanos).toBeGreaterThan(0n);
    expect(Number((directNanos as bigint) - 2n * (evalNanos as bigint))).toBeLessThanOrEqual(2);
    expect(Number((directNanos as bigint) - 2n * (evalNanos as bigint))).toBeGreaterThanOrEqual(-2);

    const logged = await eventually(
      async () => call(key, 'GET', `/requests/${e.id}-1-3-0`),
      (r) => r.status === 200,
      5000,
    );
    expect(logged.body).toMatchObject({ endpoint: '/v1/chat/completions', model: EXPENSIVE, tag: 'eval' });
    const judged = await call(key, 'GET', `/requests/${e.id}-1-3-2-judge`);
    expect(judged.status).toBe(200);
    expect(judged.body.model).toBe(JUDGE);
    const tagged = await call(key, 'GET', '/usage/by-tag');
    expect(JSON.stringify(tagged.body)).toContain('"eval"');
  });

  it('cost: the cheapest model is wrong, so the cheaper of the right ones wins', async () => {
    const e = await runEval({
      name: 'sums by cost',
      candidate_models: THREE,
      dataset: dataset(20),
      metric: 'cost',
    });
    expect(e).toMatchObject({ status: 'completed', winner_model: CHEAP, tie: false, tied_models: [] });
    expect(e.reason).toContain('lowest total cost');
    const byModel = Object.fromEntries((e.results as Json[]).map((r) => [r.model, r]));
    expect(byModel[CHEAPEST].cost_cents).toBeLessThan(byModel[CHEAP].cost_cents);
    expect(byModel[CHEAPEST].eligible).toBe(false);
  });

  it('speed: among the right ones the faster wins, though dearer', async () => {
    const e = await runEval({
      name: 'sums by speed',
      candidate_models: THREE,
      dataset: dataset(20),
      metric: 'speed',
    });
    expect(e).toMatchObject({ status: 'completed', winner_model: EXPENSIVE, tie: false });
    const byModel = Object.fromEntries((e.results as Json[]).map((r) => [r.model, r]));
    expect(byModel[EXPENSIVE].latency_p50_ms).toBeLessThan(byModel[CHEAP].latency_p50_ms);
  });

  it('quality: a clear difference is no tie, and the better model wins though dearer', async () => {
    const e = await runEval({
      name: 'hard sums',
      candidate_models: THREE,
      dataset: dataset(20, (i) => i % 2 === 1),
      metric: 'quality',
    });
    expect(e).toMatchObject({ status: 'completed', winner_model: EXPENSIVE, tie: false, tied_models: [] });
    const cheap = (e.results as Json[])[1] as Json;
    // Half right, half graded ¼ by the judge: 0.625.
    expect(cheap.mean_score).toBeCloseTo(0.625, 9);
  });

  it('eval:<id> is answered by the winner at the winner’s price, in chat completions and messages', async () => {
    const e = qualityEval;
    const client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    // Not from the response cache: both calls go to the provider and are billed.
    const { data, response } = await client.chat.completions
      .create({
        model: `eval:${e.id}`,
        messages: [{ role: 'user', content: question(5) }],
        ...({ cache: 'skip' } as object),
      })
      .withResponse();
    expect(response.headers.get('x-model')).toBe(CHEAP);
    expect(response.headers.get('x-routing-reason')).toBe(`eval:${e.id}`);
    expect(data.model).toBe(CHEAP);
    expect(data.choices[0]?.message.content).toBe('The answer is 10.');
    const direct = await call(key, 'POST', '/chat/completions', {
      model: CHEAP,
      messages: [{ role: 'user', content: question(5) }],
      cache: 'skip',
    });
    expect(response.headers.get('x-cost-cents')).toBe(direct.headers.get('x-cost-cents'));
    // The log keeps the alias the client sent, and the model that served.
    const id = response.headers.get('x-request-id') as string;
    const logged = await eventually(
      async () => call(key, 'GET', `/requests/${id}`),
      (r) => r.status === 200,
      5000,
    );
    expect(logged.body).toMatchObject({ requested_model: `eval:${e.id}`, model: CHEAP });
    // And why that model: the alias's resolution, as a routed request's record keeps the router's decision.
    expect(logged.body.routing).toEqual({
      requested: `eval:${e.id}`,
      strategy: 'eval',
      chosen: CHEAP,
      reason: `eval:${e.id}`,
    });

    const anthropic = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
    const message = await anthropic.messages
      .create({ model: `eval:${e.id}`, max_tokens: 50, messages: [{ role: 'user', content: question(6) }] })
      .withResponse();
    expect(message.response.headers.get('x-model')).toBe(CHEAP);
    expect(message.response.headers.get('x-routing-reason')).toBe(`eval:${e.id}`);
    expect(message.data.content[0]).toMatchObject({ type: 'text', text: 'The answer is 12.' });

    const streamed = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: `eval:${e.id}`,
        stream: true,
        messages: [{ role: 'user', content: question(7) }],
      }),
    });
    expect(streamed.status).toBe(200);
    expect(await streamed.text()).toContain('"content":" 14."');
    expect(streamed.headers.get('x-model')).toBe(CHEAP);
    expect(streamed.headers.get('x-routing-reason')).toBe(`eval:${e.id}`);
  });

  it('an unfinished eval is 409 eval_not_ready with its progress; the alias follows the newest completed run', async () => {
    const created = await call(key, 'POST', '/evals', {
      name: 'slow',
      candidate_models: [SLOW, EXPENSIVE],
      dataset: dataset(2),
      metric: 'speed',
    });
    expect(created.status).toBe(200);
    const id = created.body.id;
    expect(['queued', 'running']).toContain(created.body.status);
    const early = await call(key, 'POST', '/chat/completions', {
      model: `eval:${id}`,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(early.status).toBe(409);
    expect(early.body.error).toMatchObject({ type: 'eval_not_ready', code: 409 });
    expect(early.body.error.message).toMatch(/of 2 items done/);
    const early2 = await call(key, 'POST', '/messages', {
      model: `eval:${id}`,
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(early2.status).toBe(409);
    expect(early2.body.error.message).toMatch(/of 2 items done/);

    const done = await ended(gateway, key, id);
    expect(done).toMatchObject({ status: 'completed', winner_model: EXPENSIVE, completed_run: 1 });

    // A rerun while it runs keeps the alias on the newest completed run; a second rerun meanwhile is a 409.
    const rerun = await call(key, 'POST', `/evals/${id}/rerun`);
    expect(rerun.status).toBe(200);
    expect(rerun.body).toMatchObject({ run: 2, winner_model: EXPENSIVE, completed_run: 1 });
    expect(['queued', 'running']).toContain(rerun.body.status);
    expect((await call(key, 'POST', `/evals/${id}/rerun`)).status).toBe(409);
    const during = await call(key, 'POST', '/chat/completions', {
      model: `eval:${id}`,
      messages: [{ role: 'user', content: question(1) }],
    });
    expect(during.status).toBe(200);
    expect(during.headers.get('x-model')).toBe(EXPENSIVE);
    const again = await ended(gateway, key, id);
    expect(again).toMatchObject({ status: 'completed', run: 2, completed_run: 2, winner_model: EXPENSIVE });
  });

  it('cancel stops a run, keeps what it was charged; a rerun of it completes', async () => {
    const created = await call(key, 'POST', '/evals', {
      name: 'to cancel',
      candidate_models: [SLOW, CHEAP],
      dataset: dataset(20),
      metric: 'quality',
    });
    const id = created.body.id;
    await eventually(
      async () => (await call(key, 'GET', `/evals/${id}`)).body,
      (e) => e.calls_done >= 2,
      10_000,
    );
    const cancelled = await call(key, 'POST', `/evals/${id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    const after = await eventually(
      async () => (await call(key, 'GET', `/evals/${id}`)).body,
      (e) => e.status === 'cancelled',
      5000,
    );
    // Calls in flight at the cancel finish and are recorded: what the eval says it cost is what it was charged.
    await new Promise((r) => setTimeout(r, 600));
    const settled = (await call(key, 'GET', `/evals/${id}`)).body;
    expect(settled.calls_done).toBeLessThan(40);
    expect(settled.calls_done).toBeGreaterThanOrEqual(after.calls_done);
    expect(await chargedCents(gateway, `${id}-1-`, settled.cost_cents)).toBeCloseTo(settled.cost_cents, 9);
    const alias = await call(key, 'POST', '/chat/completions', {
      model: `eval:${id}`,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(alias.status).toBe(409);
    expect(alias.body.error.message).toMatch(/cancelled/);
    expect((await call(key, 'POST', `/evals/${id}/cancel`)).body.status).toBe('cancelled');

    const rerun = await call(key, 'POST', `/evals/${id}/rerun`);
    expect(rerun.body).toMatchObject({ run: 2, calls_done: 0 });
    const done = await ended(gateway, key, id);
    expect(done).toMatchObject({ status: 'completed', run: 2, items_done: 20 });
  });

  it('x-gw-tag names the calls’ tag; OpenAI-style testing criteria grade instead of the built-in checks', async () => {
    expect(
      (
        await call(
          key,
          'POST',
          '/evals',
          { name: 't', candidate_models: THREE, dataset: dataset(1), metric: 'cost' },
          {
            'x-gw-tag': ' ',
          },
        )
      ).status,
    ).toBe(400);
    const created = await call(
      key,
      'POST',
      '/evals',
      {
        name: 'graded by criteria',
        candidate_models: [EXPENSIVE, CHEAPEST],
        dataset: dataset(4),
        metric: 'quality',
        testing_criteria: [
          {
            type: 'string_check',
            name: 'exact',
            input: '{{sample.output_text}}',
            reference: '{{item.expected}}',
            operation: 'eq',
          },
          {
            type: 'score_model',
            name: 'judge',
            model: JUDGE,
            input: [{ role: 'user', content: 'Answer to grade:\n{{sample.output_text}}' }],
            pass_threshold: 0.5,
          },
        ],
      },
      { 'x-gw-tag': 'model-bakeoff' },
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const e = await ended(gateway, key, created.body.id);
    expect(e).toMatchObject({
      status: 'completed',
      tag: 'model-bakeoff',
      judge_model: null,
      winner_model: EXPENSIVE,
    });
    expect(e.testing_criteria).toHaveLength(2);
    // The right model passes both criteria; the wrong one neither (the score model gives it ¼, under ½).
    expect((e.results as Json[]).map((r) => r.mean_score)).toEqual([1, 0]);
    expect((e.results as Json[])[0].judge_cost_cents).toBeGreaterThan(0);
    const logged = await eventually(
      async () => call(key, 'GET', `/requests/${e.id}-1-0-0-grader1`),
      (r) => r.status === 200,
      5000,
    );
    expect(logged.body).toMatchObject({ model: JUDGE, tag: 'model-bakeoff' });
    expect((await call(key, 'GET', `/requests/${e.id}-1-0-1`)).body.tag).toBe('model-bakeoff');
  });

  it('gives a reasoning model grading by criteria room to reason before its score', async () => {
    // Its reasoning comes out of the output limit first, as on OpenAI's API, and runs as long as the prompt.
    openai.behave?.('o3', {
      reply: (prompt) => (/Answer to grade:\n(no idea|dunno)/.test(prompt) ? '0.25' : '1'),
    });
    const rubric = Array.from({ length: 40 }, (_, i) => `point${i}`).join(' ');
    const created = await call(key, 'POST', '/evals', {
      name: 'graded by a reasoning model',
      candidate_models: [EXPENSIVE, CHEAPEST],
      dataset: dataset(2),
      metric: 'quality',
      testing_criteria: [
        {
          type: 'score_model',
          name: 'reasoner',
          model: 'openai/o3',
          input: [{ role: 'user', content: `Answer to grade:\n{{sample.output_text}}\n\nRubric: ${rubric}` }],
          pass_threshold: 0.5,
        },
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const e = await ended(gateway, key, created.body.id);
    expect(e.status).toBe('completed');
    // The right model scores 1 and the wrong one ¼: with no room left after its reasoning it would reply nothing.
    expect((e.results as Json[]).map((r) => [r.model, r.mean_score])).toEqual([
      [EXPENSIVE, 1],
      [CHEAPEST, 0],
    ]);
  });

  it('sends eval.completed to the account’s endpoint, signed with the main key’s secret', async () => {
    const e = qualityEval;
    const hooks = await eventually(
      async () => receiver.received.filter((r) => r.headers['x-gw-event-type'] === 'eval.completed'),
      (list) => list.some((r) => JSON.parse(r.body).data.eval_id === e.id),
      10_000,
    );
    const hook = hooks.find((r) => JSON.parse(r.body).data.eval_id === e.id);
    expect(hook).toBeDefined();
    const body = JSON.parse(hook?.body as string);
    expect(body).toMatchObject({
      type: 'eval.completed',
      data: { account_id: accountId, eval_id: e.id, winner_model: CHEAP, tie: true, metric: 'quality' },
    });
    const secret = (await call(key, 'GET', '/webhook-secret')).body.secret;
    const signature = hook?.headers['x-gw-signature'] as string;
    expect(verifySignature(secret, hook?.body as string, signature, Math.floor(Date.now() / 1000))).toBe(
      'valid',
    );
  });

  it('lists the account’s evals, newest first', async () => {
    const list = await call(key, 'GET', '/evals?limit=2');
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ object: 'list', has_more: true });
    expect(list.body.data).toHaveLength(2);
    const all = await call(key, 'GET', '/evals?limit=100');
    expect(all.body.data.map((x: Json) => x.id)).toContain(qualityEval.id);
    const page2 = await call(key, 'GET', `/evals?limit=2&after=${list.body.last_id}`);
    expect(page2.body.data[0].id).not.toBe(list.body.data[0].id);
  });
});

describe('evals: refusals', () => {
  const base = { name: 'v', candidate_models: [EXPENSIVE, CHEAP], dataset: dataset(1), metric: 'quality' };

  it('holds to 2..20 candidates and 1..1000 items, and names unknown, unavailable and other-modality models', async () => {
    const one = await call(key, 'POST', '/evals', { ...base, candidate_models: [EXPENSIVE] });
    expect(one.status).toBe(400);
    expect(one.body.error.message).toMatch(/candidate_models.*2 to 20/);
    const many = await call(key, 'POST', '/evals', {
      ...base,
      candidate_models: Array.from({ length: 21 }, (_, i) => `openai/m${i}`),
    });
    expect(many.status).toBe(400);
    expect(many.body.error.message).toMatch(/2 to 20/);
    const none = await call(key, 'POST', '/evals', { ...base, dataset: [] });
    expect(none.status).toBe(400);
    expect(none.body.error.message).toMatch(/dataset.*1 to 1000/);
    const tooMany = await call(key, 'POST', '/evals', { ...base, dataset: dataset(1001) });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.message).toMatch(/1 to 1000/);

    const unknown = await call(key, 'POST', '/evals', {
      ...base,
      candidate_models: [EXPENSIVE, 'nope/nothing', 'openai/not-a-model'],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain("'nope/nothing'");
    expect(unknown.body.error.message).toContain("'openai/not-a-model'");
    const image = await call(key, 'POST', '/evals', {
      ...base,
      candidate_models: [EXPENSIVE, 'openai/dall-e-3'],
    });
    expect(image.status).toBe(400);
    expect(image.body.error.message).toMatch(/candidate_models.*dall-e-3 serves image/);
    const keyless = await call(key, 'POST', '/evals', {
      ...base,
      candidate_models: [EXPENSIVE, 'anthropic/claude-sonnet-4-5'],
    });
    expect(keyless.status).toBe(400);
    expect(keyless.body.error.message).toMatch(/claude-sonnet-4-5 is not available.*ANTHROPIC_API_KEY/);
    const twice = await call(key, 'POST', '/evals', { ...base, candidate_models: [EXPENSIVE, EXPENSIVE] });
    expect(twice.status).toBe(400);
    const alias = await call(key, 'POST', '/evals', { ...base, candidate_models: [EXPENSIVE, 'auto'] });
    expect(alias.status).toBe(400);
    const metric = await call(key, 'POST', '/evals', { ...base, metric: 'vibes' });
    expect(metric.status).toBe(400);
    const criteria = await call(key, 'POST', '/evals', {
      ...base,
      testing_criteria: [
        {
          type: 'string_check',
          name: 'x',
          input: '{{sample.output}}',
          reference: '{{item.expected}}',
          operation: 'eq',
        },
      ],
    });
    expect(criteria.status).toBe(400);
    expect(criteria.body.error.message).toMatch(/testing_criteria\.0\.input.*sample\.output/);
  });

  it('another account’s eval, or none, is 404 everywhere; as a model, 404 model_not_found', async () => {
    const mine = (await call(key, 'GET', '/evals?limit=1')).body.data[0] as Json;
    for (const [method, path] of [
      ['GET', `/evals/${mine.id}`],
      ['POST', `/evals/${mine.id}/cancel`],
      ['POST', `/evals/${mine.id}/rerun`],
      ['GET', `/evals/${mine.id}/items`],
      ['GET', '/evals/evl_000000000000000000000000'],
    ] as const) {
      const answer = await call(otherKey, method, path);
      expect(answer.status, path).toBe(404);
    }
    expect((await call(otherKey, 'GET', '/evals')).body.data).toEqual([]);
    for (const model of [`eval:${mine.id}`, 'eval:evl_000000000000000000000000', 'eval:']) {
      const chat = await call(otherKey, 'POST', '/chat/completions', {
        model,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(chat.status, model).toBe(404);
      expect(chat.body.error.type).toBe('model_not_found');
      const messages = await call(otherKey, 'POST', '/messages', {
        model,
        max_tokens: 5,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(messages.status, model).toBe(404);
    }
  });
});

describe('evals: a cap reached mid-run', () => {
  it('fails the run cleanly with the charges so far', async () => {
    const sub = await call(key, 'POST', '/sub-accounts', {
      name: 'capped',
      spend_cap_cents: 2,
      rate_limit_rpm: 100_000,
    });
    expect(sub.status).toBe(200);
    // Long prompts: about a quarter of a cent an item for the three of them at the batch rate.
    const filler = 'word '.repeat(2000);
    const data = Array.from({ length: 20 }, (_, i) => ({
      input: `${question(i)} ${filler}`,
      expected: String(2 * i),
    }));
    const e = await runEval(
      { name: 'capped', candidate_models: THREE, dataset: data, metric: 'cost', max_tokens: 16 },
      sub.body.key,
    );
    expect(e.status).toBe('failed');
    expect(e.error).toMatchObject({ type: 'budget_exceeded', code: 402 });
    expect(e.calls_done).toBeGreaterThan(0);
    expect(e.calls_done).toBeLessThan(60);
    expect(e.winner_model).toBeNull();
    expect(await chargedCents(gateway, `${e.id}-1-`, e.cost_cents)).toBeCloseTo(e.cost_cents, 9);
    expect(e.cost_cents).toBeLessThanOrEqual(2);
    expect(e.cost_cents).toBeGreaterThan(1);
    // Nothing was charged after the run failed.
    await new Promise((r) => setTimeout(r, 300));
    expect(await chargedCents(gateway, `${e.id}-`, e.cost_cents)).toBeCloseTo(e.cost_cents, 9);
    const hook = await eventually(
      async () => receiver.received.find((r) => r.body.includes(e.id)),
      (r) => r !== undefined,
      10_000,
    );
    expect(hook?.headers['x-gw-event-type']).toBe('eval.failed');
    expect(JSON.parse(hook?.body as string).data.error.type).toBe('budget_exceeded');
  });
});

describe('evals: the router’s quality figures', () => {
  it('an account’s newest completed eval replaces the public prior for that account alone', async () => {
    const account = (await (await gateway.admin('/accounts', { name: 'routed' })).json()) as Json;
    await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'p' });
    const preview = (apiKey: string) =>
      call(
        apiKey,
        'POST',
        '/routing/preview',
        { model: 'auto', messages: [{ role: 'user', content: 'hi' }] },
        {
          'x-routing': 'quality',
        },
      );
    expect((await preview(account.key)).body.quality_source).toBe('prior');
    const e = await runEval(
      {
        name: 'hard sums',
        candidate_models: THREE,
        dataset: dataset(6, (i) => i % 2 === 1),
        metric: 'quality',
      },
      account.key,
    );
    // Six items cannot tell 1 from 0.625 apart: a tie, to the cheaper. The router still ranks by the means.
    expect(e).toMatchObject({ winner_model: CHEAP, tie: true });
    // The router keeps an account's figures for 5 s (src/evals/quality.ts): let the ones read above age out.
    clockAheadMs += 5_000;
    const routed = await eventually(
      async () => (await preview(account.key)).body,
      (p) => p.quality_source === `eval:${e.id}`,
      10_000,
    );
    expect(routed).toMatchObject({ quality_source: `eval:${e.id}`, chosen: EXPENSIVE });
    expect(routed.candidates.map((c: Json) => c.model).sort()).toEqual([...THREE].sort());
    expect((await preview(otherKey)).body.quality_source).toBe('prior');
  });
});
