import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/catalog/index.ts';
import { knownLimits } from '../../src/catalog/model-limits.ts';
import { QUALITY_PRIOR } from '../../src/catalog/quality.ts';
import type { CatalogModel } from '../../src/catalog/types.ts';
import { chatCharge } from '../../src/chat/pricing.ts';
import type { ChatCompletionRequest } from '../../src/chat/request.ts';
import { countInputTokens } from '../../src/chat/service.ts';
import { priceCharge } from '../../src/contracts/money.ts';
import { usdText } from '../../src/pipeline/headers.ts';
import { EXPECTED_OUTPUT_TOKENS } from '../../src/routing/router.ts';
import { runCli } from '../support/cli.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Json, json } from '../support/json.ts';
import { startAnthropicUpstream } from '../upstreams/anthropic.ts';
import { startGeminiUpstream } from '../upstreams/gemini.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

let openai: Upstream;
let anthropic: Upstream;
let gemini: Upstream;
let gateway: TestGateway;
let accountId: string;
let key: string;
let client: OpenAI;

const catalog = buildCatalog();
const model = (id: string) => catalog.get(id) as CatalogModel;
// What the operator's lists leave of the prior's models for these three providers (o1-mini is the one
// without tool calling, o3-mini and o1-mini the ones without image input; gemini-2.0-flash-lite is excluded).
const ROUTABLE = [
  'openai/gpt-4o-mini',
  'openai/gpt-4.1',
  'openai/o1-mini',
  'openai/o3-mini',
  'anthropic/claude-3-5-sonnet',
  'anthropic/claude-opus-4-0',
  'google/gemini-2.0-flash',
  'google/gemini-2.5-flash',
  'google/gemini-2.5-pro',
];

/** What `quality` picks among them, the baseline when a request names none. */
const BEST = 'google/gemini-2.5-pro';

beforeAll(async () => {
  [openai, anthropic, gemini] = await Promise.all([
    startOpenAiUpstream(),
    startAnthropicUpstream(),
    startGeminiUpstream(),
  ]);
  const file = join(tmpdir(), `gw-routing-${process.pid}-${Date.now()}.json`);
  await writeFile(
    file,
    JSON.stringify({
      providers: {
        openai: { api_key: 'sk-openai', base_url: `${openai.url}/v1` },
        anthropic: { api_key: 'sk-anthropic', base_url: anthropic.url },
        google: { api_key: 'google-key', base_url: gemini.url },
      },
      routing: {
        allowed: [
          'openai/gpt-4o-mini',
          'openai/gpt-4.1',
          'openai/o1-mini',
          'openai/o3-mini',
          // Named one by one: the prior covers every current Claude model, and the candidates here stay few.
          'anthropic/claude-3-5-sonnet',
          'anthropic/claude-opus-4-0',
          'google/gemini-2.*',
        ],
        excluded: ['google/*-lite'],
      },
    }),
  );
  gateway = await startTestGateway({ GATEWAY_CONFIG: file, GATEWAY_UPSTREAM_TIMEOUT_MS: '3000' });
  const account = await json(await gateway.admin('/accounts', { name: 'routed' }));
  accountId = account.account_id;
  key = account.key;
  await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 100_000, reference: 'funding' });
  client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.close();
  await Promise.all([openai?.close(), anthropic?.close(), gemini?.close()]);
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}, apiKey = key) =>
  fetch(`${gateway.url}/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
const get = async (path: string) =>
  json(await fetch(`${gateway.url}/v1${path}`, { headers: { authorization: `Bearer ${key}` } }));
const preview = async (body: unknown, routing?: string): Promise<Json> => {
  const response = await post('/routing/preview', body, routing ? { 'x-routing': routing } : {});
  expect(response.status).toBe(200);
  return json(response);
};
const ask = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'auto',
  messages: [{ role: 'user', content }],
  ...extra,
});

/** This request's price on a model as the router prices it: the counted prompt and the expected output. */
async function priceOn(id: string, body: Record<string, unknown>): Promise<bigint> {
  const m = model(id);
  const input = await countInputTokens(body as ChatCompletionRequest);
  const output = (body.max_tokens as number | undefined) ?? EXPECTED_OUTPUT_TOKENS;
  return priceCharge([
    { item: 'input_tokens', quantity: input, unitPriceNanosPerMillion: m.prices.inputNanosPerMillion ?? 0n },
    {
      item: 'output_tokens',
      quantity: output,
      unitPriceNanosPerMillion: m.prices.outputNanosPerMillion ?? 0n,
    },
  ]).chargedNanos;
}
const prior = (id: string) => QUALITY_PRIOR.find((f) => f.model === id)?.score ?? 0;
const cheapest = async (ids: string[], body: Record<string, unknown>) => {
  const priced = await Promise.all(ids.map(async (id) => ({ id, price: await priceOn(id, body) })));
  return priced.sort((a, b) =>
    a.price < b.price ? -1 : a.price > b.price ? 1 : prior(b.id) - prior(a.id),
  )[0]?.id;
};

describe('the automatic router, through the openai SDK against three simulated providers', () => {
  it('speed picks the model of the provider with the lowest recorded latency (then the cheapest of it)', async () => {
    // Latencies recorded by the gateway's own calls: OpenAI and Gemini answer late, Anthropic at once.
    for (let i = 0; i < 3; i++) {
      openai.script({ kind: 'slow_first_byte', ms: 150 });
      gemini.script({ kind: 'slow_first_byte', ms: 150 });
      await client.chat.completions.create({
        model: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: `hi ${i}` }],
      });
      await client.chat.completions.create({
        model: 'google/gemini-2.0-flash',
        messages: [{ role: 'user', content: `hi ${i}` }],
      });
      await client.chat.completions.create({
        model: 'anthropic/claude-3-5-sonnet',
        messages: [{ role: 'user', content: `hi ${i}` }],
      });
    }
    const health: Json = await get('/health/providers');
    expect(health.data.map((p: Json) => p.requests)).toEqual([3, 3, 3]);
    const p50 = new Map<string, number>(health.data.map((p: Json) => [p.provider, p.p50_ms]));
    const fastest = [...p50].sort((a, b) => a[1] - b[1])[0]?.[0];
    expect(fastest).toBe('anthropic');
    const body = ask('What is the capital of France?');
    const expected = await cheapest(
      ROUTABLE.filter((id) => id.startsWith(`${fastest}/`)),
      body,
    );
    const { data, response } = await client.chat.completions
      .create(body as never, { headers: { 'x-routing': 'speed' } })
      .withResponse();
    expect(response.headers.get('x-routing-strategy')).toBe('speed');
    expect(response.headers.get('x-routing-reason')).toBe('fastest');
    expect(response.headers.get('x-routing-model')).toBe(expected);
    expect(response.headers.get('x-model')).toBe(expected);
    expect((data as Json).model).toBe(expected);
  });

  it('cost picks the cheapest fitting model at the catalog prices, quality the best prior', async () => {
    const body = ask('Name three colours.');
    const expectedCheap = await cheapest(ROUTABLE, body);
    const cheap = await client.chat.completions
      .create(body as never, { headers: { 'x-routing': 'cost' } })
      .withResponse();
    expect(cheap.response.headers.get('x-routing-model')).toBe(expectedCheap);
    expect(cheap.response.headers.get('x-routing-reason')).toBe('cheapest');
    expect(cheap.response.headers.get('x-model')).toBe(expectedCheap);

    const best = [...ROUTABLE].sort((a, b) => prior(b) - prior(a))[0];
    const good = await client.chat.completions
      .create(ask('Name three colours, again.') as never, { headers: { 'x-routing': 'quality' } })
      .withResponse();
    expect(good.response.headers.get('x-routing-model')).toBe(best);
    expect(good.response.headers.get('x-routing-reason')).toBe('best-quality');
    // Without a baseline_model, the baseline is what quality would pick.
    expect(cheap.response.headers.get('x-auto-baseline-model')).toBe(best);
    expect(best).not.toBe(expectedCheap);
  });

  it('auto takes the cheapest model whose quality suits the complexity: a hard request gets a better model', async () => {
    const easy = await preview(ask('Hi there'));
    const hard = await preview(
      ask(
        `Explain step by step and prove the bound: given the function below, analyze its complexity and derive the integral of x^2 + 3*x = 7.\n\`\`\`\nfunction f(n) { return n <= 1 ? n : f(n - 1) + f(n - 2); }\n\`\`\`\n${'Consider every case in detail. '.repeat(150)}`,
      ),
    );
    for (const decision of [easy, hard]) {
      expect(decision.strategy).toBe('auto');
      const suited = decision.candidates.filter((c: Json) => c.quality >= decision.complexity);
      const cheapestSuited = suited.sort((a: Json, b: Json) => {
        const d = BigInt(a.price_nanos) - BigInt(b.price_nanos);
        return d < 0n ? -1 : d > 0n ? 1 : b.quality - a.quality;
      })[0];
      expect(decision.chosen).toBe(cheapestSuited.model);
      expect(decision.reason).toBe(`complexity ${decision.complexity}`);
    }
    expect(easy.complexity).toBeLessThan(0.2);
    expect(hard.complexity).toBeGreaterThan(0.7);
    expect(prior(hard.chosen)).toBeGreaterThan(prior(easy.chosen));
    // The preview called nobody and charged nothing: the real request routes the same way.
    const { response } = await client.chat.completions.create(ask('Hi there') as never).withResponse();
    expect(response.headers.get('x-routing-model')).toBe(easy.chosen);
    expect(response.headers.get('x-routing-strategy')).toBe('auto');
  });

  it('tools, images and a long prompt exclude the models that cannot take them', async () => {
    const plain = await preview(ask('hello'), 'cost');
    const ids = (d: Json) => d.candidates.map((c: Json) => c.model);
    expect(ids(plain)).toContain('openai/o1-mini');
    expect(plain.candidates_count).toBe(ROUTABLE.length);

    const tools = [
      { type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: {} } } },
    ];
    const withTools = await preview(ask('What is the weather in Paris?', { tools }), 'cost');
    expect(ids(withTools)).not.toContain('openai/o1-mini');
    expect(withTools.candidates_count).toBe(ROUTABLE.length - 1);

    const image = {
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      ],
    };
    const withImage = await preview({ model: 'auto', messages: [image] }, 'cost');
    expect(ids(withImage)).not.toContain('openai/o1-mini');
    expect(ids(withImage)).not.toContain('openai/o3-mini');

    // About 140,000 tokens: more than the 128,000-token windows of gpt-4o-mini and o1-mini hold.
    const long = await preview(ask('lorem '.repeat(140_000)), 'cost');
    expect(ids(long)).not.toContain('openai/gpt-4o-mini');
    expect(ids(long)).not.toContain('openai/o1-mini');
    expect(ids(long)).toContain('openai/gpt-4.1');

    // Served: a tool call from the routed model, which can call tools.
    const served = await client.chat.completions
      .create(ask('What is the weather in Paris?', { tools }) as never, { headers: { 'x-routing': 'cost' } })
      .withResponse();
    expect(served.response.headers.get('x-routing-model')).toBe(withTools.chosen);
    expect(model(withTools.chosen).capabilities).toContain('function_calling');
    expect(served.data.choices[0]?.message.tool_calls?.[0]).toBeDefined();
  });

  it('routes a large max_tokens only to models known to write that much, and refuses one no model can', async () => {
    // Every candidate here has its limits in the catalog's data (models.dev): Gemini 2.5 Pro's window too.
    for (const id of ROUTABLE) expect(knownLimits(model(id)).maxOutputTokens, id).not.toBeNull();
    expect(model('google/gemini-2.5-pro').contextWindow).toBe(1_048_576);

    const body = ask('Write a long story.', { max_tokens: 50_000 });
    const input = await countInputTokens(body as ChatCompletionRequest);
    const takes = ROUTABLE.filter((id) => {
      const { contextWindow, maxOutputTokens } = knownLimits(model(id));
      return 50_000 <= (maxOutputTokens ?? 0) && input + 50_000 <= (contextWindow ?? 0);
    });
    expect(takes.length).toBeGreaterThan(0);
    expect(takes.length).toBeLessThan(ROUTABLE.length);
    const decision = await preview(body, 'cost');
    expect(decision.candidates.map((c: Json) => c.model).sort()).toEqual([...takes].sort());
    expect(decision.chosen).toBe(await cheapest(takes, body));

    // Five million tokens: more than any model writes. Were a model of unknown limits taken to fit, the provider
    // would refuse it (a 502); it is the gateway's own 400, naming the rule.
    const huge = await post('/chat/completions', ask('Write everything.', { max_tokens: 5_000_000 }));
    expect(huge.status).toBe(400);
    const refused = await json(huge);
    expect(refused.error.message).toMatch(
      new RegExp(
        `^'model': no model fits this request for auto \\(of ${ROUTABLE.length}: .*have a context window too small`,
      ),
    );
    expect(huge.headers.get('x-routing-model')).toBeNull();
  });

  it('never chooses above baseline_model for this request, and counts the saving against it', async () => {
    const body = ask('Give me a haiku about rivers.', { baseline_model: 'openai/gpt-4.1' });
    const cap = await priceOn('openai/gpt-4.1', body);
    const decision = await preview(body, 'quality');
    expect(decision.baseline).toBe('openai/gpt-4.1');
    expect(BigInt(decision.baseline_price_nanos)).toBe(cap);
    for (const c of decision.candidates) expect(typeof c.price_nanos).toBe('string');
    const allowed = ROUTABLE.filter((id) => prior(id) > 0);
    const underCap = (await Promise.all(allowed.map(async (id) => ({ id, price: await priceOn(id, body) }))))
      .filter((c) => c.price <= cap)
      .sort((a, b) => prior(b.id) - prior(a.id));
    expect(decision.chosen).toBe(underCap[0]?.id);
    expect(await priceOn(decision.chosen, body)).toBeLessThanOrEqual(cap);
    // The unrestricted quality pick costs more than the cap: the cap is what changed the choice.
    const free = await preview(ask('Give me a haiku about rivers.'), 'quality');
    expect(await priceOn(free.chosen, body)).toBeGreaterThan(cap);

    const { response } = await client.chat.completions
      .create(body as never, { headers: { 'x-routing': 'quality' } })
      .withResponse();
    expect(response.headers.get('x-routing-model')).toBe(decision.chosen);
    expect(response.headers.get('x-auto-baseline-model')).toBe('openai/gpt-4.1');
  });

  it('X-Auto-Saved-Usd is the usage repriced at the baseline (cache reads included) minus the charge, to the nano-dollar', async () => {
    // The simulators report the system prompt as read from their cache when it says "cached".
    const system = `You are a cached assistant. ${'Answer briefly and kindly. '.repeat(40)}`;
    for (const [routing, baseline] of [
      ['cost', 'anthropic/claude-opus-4-0'],
      ['quality', 'openai/gpt-4o-mini'],
    ] as const) {
      const { data, response } = await client.chat.completions
        .create(
          {
            model: 'auto',
            baseline_model: baseline,
            messages: [
              { role: 'system', content: system },
              { role: 'user', content: `Say something about ${routing}.` },
            ],
          } as never,
          { headers: { 'x-routing': routing } },
        )
        .withResponse();
      const served = response.headers.get('x-model') as string;
      const usage = (data as Json).usage;
      // The charge, once the read model has folded its settlement.
      const { rows } = await eventually(
        () =>
          gateway.runtime.database.pool.query<{ charged_nanos: string }>(
            'SELECT charged_nanos::text FROM charges WHERE request_id = $1',
            [response.headers.get('x-request-id')],
          ),
        (result) => result.rows.length === 1,
        3000,
      );
      const charged = BigInt(rows[0]?.charged_nanos ?? '-1');
      const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
      expect(cached).toBeGreaterThan(0);
      const atBaseline = chatCharge(model(baseline), {
        promptTokens: usage.prompt_tokens,
        completionTokens: usage.completion_tokens,
        cachedPromptTokens: cached,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
      }).chargedNanos;
      expect(response.headers.get('x-auto-saved-usd')).toBe(usdText(atBaseline - charged));
      // Never above the baseline's price for this request, so the saving here is not negative.
      expect(served).not.toBe(baseline);
      expect(atBaseline).toBeGreaterThan(charged);
    }
    // A saving below zero (a model cheaper by the estimate, dearer by the actual usage) keeps its sign.
    expect(usdText(-1_250n)).toBe('-0.000001250');
  });

  it('a conversation keeps its model while it fits, instead of being routed afresh', async () => {
    const system = { role: 'system', content: 'You are a tutor.' };
    const first = { role: 'user', content: 'Hello!' };
    const opening = await client.chat.completions
      .create({ model: 'auto', messages: [system, first] } as never)
      .withResponse();
    const kept = opening.response.headers.get('x-routing-model');
    const followUp = {
      model: 'auto',
      messages: [
        system,
        first,
        { role: 'assistant', content: 'Hello! How can I help?' },
        {
          role: 'user',
          content: `Prove step by step that the integral of x^2 is x^3/3, then write \`\`\`python\ndef f(x): return x**3/3\n\`\`\` ${'and explain in detail. '.repeat(200)}`,
        },
      ],
    };
    // Another conversation with the same turn would be routed elsewhere: the stay is what keeps it.
    const fresh = await preview({
      ...followUp,
      messages: [system, { role: 'user', content: 'Another start' }, ...followUp.messages.slice(2)],
    });
    expect(fresh.chosen).not.toBe(kept);
    const next = await client.chat.completions.create(followUp as never).withResponse();
    expect(next.response.headers.get('x-routing-model')).toBe(kept);
    expect(next.response.headers.get('x-routing-reason')).toBe('conversation');
  });

  it('headers on streams, on the Messages API, and on an error after the model was chosen; fallback to the next candidate', async () => {
    const stream = await post(
      '/chat/completions',
      { ...ask('stream me'), stream: true },
      { 'x-routing': 'cost' },
    );
    expect(stream.status).toBe(200);
    const streamed = stream.headers.get('x-routing-model');
    expect(streamed).toBeTruthy();
    expect(stream.headers.get('x-model')).toBe(streamed);
    expect(stream.headers.get('x-auto-saved-usd')).toBeNull();
    expect(await stream.text()).toContain('[DONE]');

    // Its saving comes in the final usage chunk (the headers went out before it was known), as in the log.
    const sdkStream = await client.chat.completions.create(
      { ...ask('stream me with usage'), stream: true, stream_options: { include_usage: true } } as never,
      { headers: { 'x-routing': 'cost' } },
    );
    let usage: Json;
    for await (const chunk of sdkStream as unknown as AsyncIterable<Json>)
      if (chunk.usage) usage = chunk.usage;
    const atBaseline = chatCharge(model(BEST), {
      promptTokens: usage.prompt_tokens,
      completionTokens: usage.completion_tokens,
      cachedPromptTokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
    }).chargedNanos;
    const chargedNanos = BigInt(Math.round(usage.cost_cents * 1e7));
    expect(usage.saved_usd).toBe(usdText(atBaseline - chargedNanos));

    const messages = await post(
      '/messages',
      { model: 'auto', max_tokens: 50, messages: [{ role: 'user', content: 'Hi from Anthropic' }] },
      { 'x-routing': 'quality' },
    );
    expect(messages.status).toBe(200);
    const message = await json(messages);
    expect(message.type).toBe('message');
    expect(messages.headers.get('x-routing-model')).toBe(message.model);

    // The chosen model's provider refuses the request outright (not retryable): the error carries the decision.
    const decision = await preview(ask('fail please'), 'cost');
    const upstreamOf = (id: string) => ({ openai, anthropic, google: gemini })[id.split('/')[0] as 'openai'];
    upstreamOf(decision.chosen).script({ kind: 'error', status: 400 });
    const failed = await post('/chat/completions', ask('fail please'), { 'x-routing': 'cost' });
    expect(failed.status).toBe(400);
    expect(failed.headers.get('x-routing-model')).toBe(decision.chosen);
    expect(failed.headers.get('x-routing-strategy')).toBe('cost');
    // Its record says how it was routed, as a served request's does.
    const failedRecord = await eventually(
      () => get(`/requests/${failed.headers.get('x-request-id')}`),
      (r) => r.status === 400,
      3000,
    );
    expect(failedRecord.routing).toMatchObject({ strategy: 'cost', chosen: decision.chosen });

    // A server error on the chosen model: the next candidate serves, as a `models` fallback would.
    upstreamOf(decision.chosen).script({ kind: 'error', status: 500 });
    upstreamOf(decision.chosen).script({ kind: 'error', status: 500 });
    upstreamOf(decision.chosen).script({ kind: 'error', status: 500 });
    const fellBack = await client.chat.completions
      .create(ask('fail please') as never, { headers: { 'x-routing': 'cost' } })
      .withResponse();
    expect(fellBack.response.headers.get('x-routing-model')).toBe(decision.chosen);
    expect(fellBack.response.headers.get('x-model')).toBe(decision.fallbacks[0]);
  });

  it('refuses an unknown x-routing naming the allowed values, and a request no model fits saying why', async () => {
    const unknown = await post('/chat/completions', ask('hi'), { 'x-routing': 'cheap' });
    expect(unknown.status).toBe(400);
    const body = await json(unknown);
    expect(body.error.message).toBe("'x-routing': one of cost, speed, quality, auto");
    expect(body.error.param).toBe('x-routing');

    const image = { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } };
    const none = await post('/chat/completions', {
      model: 'auto/text',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }, image] }],
    });
    expect(none.status).toBe(400);
    const why = await json(none);
    expect(why.error.type).toBe('invalid_request_error');
    expect(why.error.message).toMatch(/^'model': no model fits this request for auto\/text/);
    expect(why.error.message).toMatch(/take no image input/);

    const baseline = await post('/chat/completions', ask('hi', { baseline_model: 'openai/no-such-model' }));
    expect((await json(baseline)).error.message).toBe(
      "'baseline_model': the model 'openai/no-such-model' does not exist",
    );
  });

  it('records the decision in the request log, and the month’s routed requests and savings in usage by tag', async () => {
    const { response } = await client.chat.completions
      .create(ask('log me', { baseline_model: 'anthropic/claude-opus-4-0' }) as never, {
        headers: { 'x-routing': 'cost', 'x-gw-tag': 'routed-tag' },
      })
      .withResponse();
    const requestId = response.headers.get('x-request-id') as string;
    const record = await eventually(
      () => get(`/requests/${requestId}`),
      (r) => r.routing !== undefined && r.routing !== null,
      3000,
    );
    expect(record.routing.strategy).toBe('cost');
    expect(record.routing.chosen).toBe(response.headers.get('x-routing-model'));
    expect(record.routing.reason).toBe('cheapest');
    expect(record.routing.baseline).toBe('anthropic/claude-opus-4-0');
    expect(record.routing.candidates[0]).toMatchObject({ model: record.routing.chosen });
    expect(record.routing.candidates[0]).toHaveProperty('latency_ms');
    expect(record.routing.candidates[0]).toHaveProperty('quality');
    const saved = response.headers.get('x-auto-saved-usd') as string;
    const savedNanos = BigInt(saved.replace('.', ''));
    expect(record.routing.saved_nanos).toBe(savedNanos.toString());

    const usage = await eventually(
      () => get('/usage/by-tag'),
      (u) => u.data.some((row: Json) => row.tag === 'routed-tag' && row.routed_requests === 1),
      3000,
    );
    const row = usage.data.find((r: Json) => r.tag === 'routed-tag');
    expect(row.routed_requests).toBe(1);
    expect(row.saved_cents).toBeCloseTo(Number(savedNanos) / 1e7, 7);

    // A sub-account's usage counts its own routed requests and savings, in total and per tag.
    const sub = await json(await post('/sub-accounts', { name: 'routed customer', spend_cap_cents: 500 }));
    const subClient = new OpenAI({ apiKey: sub.key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    const routed = await subClient.chat.completions
      .create(ask('a customer asks', { baseline_model: 'anthropic/claude-opus-4-0' }) as never, {
        headers: { 'x-routing': 'cost' },
      })
      .withResponse();
    await subClient.chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'named' }],
    });
    const subSaved = BigInt((routed.response.headers.get('x-auto-saved-usd') as string).replace('.', ''));
    const subUsage = await eventually(
      () => get(`/sub-accounts/${sub.id}/usage`),
      (u) => u.requests === 2 && u.routed_requests === 1,
      3000,
    );
    expect(subUsage.routed_requests).toBe(1);
    expect(subUsage.saved_cents).toBeCloseTo(Number(subSaved) / 1e7, 7);
    expect(subUsage.by_tag[0]).toMatchObject({ requests: 2, routed_requests: 1 });
  });

  it('an account restricted by the operator (admin API) routes only within its list', async () => {
    const restricted = await gateway.admin(`/accounts/${accountId}/routing`, {
      allowed: ['anthropic/*'],
      excluded: [],
    });
    expect(restricted.status).toBe(200);
    const decision = await eventually(
      () => preview(ask('who are you'), 'cost'),
      (d) => d.chosen.startsWith('anthropic/'),
      3000,
    );
    expect(decision.candidates.every((c: Json) => c.model.startsWith('anthropic/'))).toBe(true);
    const { rows } = await gateway.runtime.database.pool.query<{ data: Json }>(
      `SELECT data FROM events WHERE type = 'AccountSettingsChanged' AND data->>'accountId' = $1`,
      [accountId],
    );
    expect(rows.map((r) => r.data.routing)).toContainEqual({ allowed: ['anthropic/*'], excluded: [] });
    // The CLI says the same through the admin API: here, everything but Anthropic's models.
    const cli = await runCli(
      ['accounts', 'routing', '--account', accountId, '--exclude', 'anthropic/*'],
      gateway.env,
    );
    expect(cli.code).toBe(0);
    expect(cli.json).toEqual({
      account_id: accountId,
      routing: { allowed: null, excluded: ['anthropic/*'] },
    });
    const excluded = await eventually(
      () => preview(ask('who are you'), 'cost'),
      (d) => !d.candidates.some((c: Json) => c.model.startsWith('anthropic/')),
      3000,
    );
    expect(excluded.candidates_count).toBe(ROUTABLE.length - 2);
    const lifted = await runCli(['accounts', 'routing', '--account', accountId], gateway.env);
    expect(lifted.code).toBe(0);
    await eventually(
      () => preview(ask('who are you'), 'cost'),
      (d) => d.candidates_count === ROUTABLE.length,
      3000,
    );
  });

  it('both lists empty lifts an account’s restriction, and an empty allowed list alone allows every model', async () => {
    const restrict = (routing: Json) => gateway.admin(`/accounts/${accountId}/routing`, routing);
    await restrict({ allowed: ['anthropic/*'], excluded: [] });
    await eventually(
      () => preview(ask('who are you'), 'cost'),
      (d) => d.candidates.every((c: Json) => c.model.startsWith('anthropic/')),
      3000,
    );
    const lifted = await restrict({ allowed: [], excluded: [] });
    expect(lifted.status).toBe(200);
    const all = await eventually(
      () => preview(ask('who are you'), 'cost'),
      (d) => d.candidates_count === ROUTABLE.length,
      3000,
    );
    expect(await json(lifted)).toEqual({ account_id: accountId, routing: { allowed: null, excluded: [] } });
    expect(all.candidates_count).toBe(ROUTABLE.length);
    // A request without a model is routed among them all too (a prompt of its own, so no conversation is kept).
    const chat = await post(
      '/chat/completions',
      { messages: [{ role: 'user', content: 'routed with no lists' }] },
      { 'x-routing': 'cost' },
    );
    expect(chat.status).toBe(200);
    expect(chat.headers.get('x-routing-model')).toBe(all.chosen);

    await restrict({ allowed: [], excluded: ['anthropic/*'] });
    const notAnthropic = await eventually(
      () => preview(ask('who are you'), 'cost'),
      (d) => !d.candidates.some((c: Json) => c.model.startsWith('anthropic/')),
      3000,
    );
    expect(notAnthropic.candidates_count).toBe(ROUTABLE.length - 2);
    await restrict({ allowed: null, excluded: [] });
  });
});

describe('an account’s evals and the router', () => {
  it('an eval of models the router cannot use leaves it routing on the prior', async () => {
    const account = await json(await gateway.admin('/accounts', { name: 'evaluated locally' }));
    await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 1000, reference: 'funding' });
    const created = await post(
      '/evals',
      {
        name: 'echoes',
        candidate_models: ['local/echo', 'local/echo-pro'],
        dataset: [{ input: 'hello', expected: 'hello' }],
        metric: 'quality',
      },
      {},
      account.key,
    );
    const { id, ...refusal } = await json(created);
    expect(created.status, JSON.stringify(refusal)).toBe(200);
    const done = await eventually(
      async () =>
        json(
          await fetch(`${gateway.url}/v1/evals/${id}`, {
            headers: { authorization: `Bearer ${account.key}` },
          }),
        ),
      (e) => e.status === 'completed',
      10_000,
    );
    // Both graded: an eval the router would take, were its models ones it can route to.
    expect(done.results.filter((c: Json) => c.mean_score !== null)).toHaveLength(2);
    // A prompt of its own: a conversation routed earlier would keep its model.
    const body = ask('which model answers after an eval?');
    const usual = await preview(body, 'quality');
    const evaluated = await post('/routing/preview', body, { 'x-routing': 'quality' }, account.key);
    expect(evaluated.status).toBe(200);
    expect(await json(evaluated)).toMatchObject({ quality_source: 'prior', chosen: usual.chosen });
    const chat = await post(
      '/chat/completions',
      { messages: body.messages },
      { 'x-routing': 'quality' },
      account.key,
    );
    expect(chat.status).toBe(200);
    expect(chat.headers.get('x-routing-model')).toBe(usual.chosen);
  });
});

describe('with no provider configured', () => {
  it('the demo routes among the local models', async () => {
    const demo = await startTestGateway();
    try {
      const account = await json(await demo.admin('/accounts', { name: 'demo' }));
      await demo.admin(`/accounts/${account.account_id}/top-ups`, { cents: 100, reference: 'p' });
      const sdk = new OpenAI({ apiKey: account.key, baseURL: `${demo.url}/v1`, maxRetries: 0 });
      const cheap = await sdk.chat.completions
        .create({ messages: [{ role: 'user', content: 'hello' }] } as never, {
          headers: { 'x-routing': 'cost' },
        })
        .withResponse();
      expect(cheap.response.headers.get('x-routing-model')).toBe('local/echo');
      expect((cheap.data as Json).choices[0].message.content).toBe('hello');
      const best = await sdk.chat.completions
        .create({ model: 'auto', messages: [{ role: 'user', content: 'hello again' }] } as never, {
          headers: { 'x-routing': 'quality' },
        })
        .withResponse();
      expect(best.response.headers.get('x-routing-model')).toBe('local/echo-pro');
    } finally {
      await demo.close();
    }
  });
});
