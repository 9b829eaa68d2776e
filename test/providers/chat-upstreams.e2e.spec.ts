import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/catalog/index.ts';
import { chatCharge } from '../../src/chat/pricing.ts';
import { nanosToCents } from '../../src/contracts/money.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { startAnthropicUpstream } from '../upstreams/anthropic.ts';
import { startGeminiUpstream } from '../upstreams/gemini.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

const catalog = buildCatalog();
let openai: Upstream;
let anthropic: Upstream;
let gemini: Upstream;
let gateway: TestGateway;
let client: OpenAI;
let key: string;

beforeAll(async () => {
  [openai, anthropic, gemini] = await Promise.all([
    startOpenAiUpstream(),
    startAnthropicUpstream(),
    startGeminiUpstream(),
  ]);
  gateway = await startTestGateway({
    OPENAI_API_KEY: 'sk-upstream-openai',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    ANTHROPIC_API_KEY: 'sk-upstream-anthropic',
    ANTHROPIC_BASE_URL: anthropic.url,
    GOOGLE_API_KEY: 'upstream-google',
    GOOGLE_BASE_URL: gemini.url,
    GATEWAY_UPSTREAM_TIMEOUT_MS: '1500',
    GATEWAY_MAX_RETRY_WAIT_MS: '2000',
  });
  const account = await json(await gateway.admin('/accounts', { name: 'upstreams' }));
  key = account.key;
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'funding' });
  client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.close();
  await Promise.all([openai?.close(), anthropic?.close(), gemini?.close()]);
});

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
  },
};

describe.each([
  ['openai/gpt-4o', () => openai, 'gpt-4o'],
  ['anthropic/claude-sonnet-4-5', () => anthropic, 'claude-sonnet-4-5'],
  ['google/gemini-2.5-flash', () => gemini, 'gemini-2.5-flash'],
])('chat through %s with the openai SDK', (model, upstream, upstreamModel) => {
  it('answers, and charges the catalog price of the usage the provider reported', async () => {
    const { data, response } = await client.chat.completions
      .create({ model, max_tokens: 50, messages: [{ role: 'user', content: 'hello world' }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe('echo: hello world');
    expect(data.model).toBe(model);
    expect(response.headers.get('x-model')).toBe(model);
    expect(response.headers.get('x-provider')).toBe(model.split('/')[0]);
    const usage = data.usage as OpenAI.CompletionUsage;
    const expected = chatCharge(catalog.get(model) as NonNullable<ReturnType<typeof catalog.get>>, {
      promptTokens: usage.prompt_tokens,
      completionTokens: usage.completion_tokens,
      cachedPromptTokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
      cacheWriteTokens: 0,
      reasoningTokens: usage.completion_tokens_details?.reasoning_tokens ?? 0,
    });
    expect(Number(response.headers.get('x-cost-cents'))).toBe(nanosToCents(expected.chargedNanos));
    // The provider's own model id, in the body (OpenAI, Anthropic) or the path (Gemini).
    const sent = upstream().requests.at(-1);
    expect(`${sent?.path} ${JSON.stringify(sent?.body)}`).toContain(upstreamModel);
  });

  it('streams the reply and bills it from the final usage', async () => {
    const stream = await client.chat.completions.create({
      model,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'stream these words please' }],
    });
    let text = '';
    let usage: (OpenAI.CompletionUsage & { cost_cents?: number }) | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('echo: stream these words please');
    expect(usage?.completion_tokens).toBeGreaterThan(0);
    expect(usage?.cost_cents).toBeGreaterThan(0);
  });

  it('normalises tool calls, plain and streamed', async () => {
    const request = {
      model,
      tools: [weatherTool],
      messages: [{ role: 'user' as const, content: 'what is the weather' }],
    };
    const plain = await client.chat.completions.create(request);
    expect(plain.choices[0]?.finish_reason).toBe('tool_calls');
    const call = plain.choices[0]?.message.tool_calls?.[0] as {
      function: { name: string; arguments: string };
    };
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
    const streamed = await client.chat.completions.stream(request).finalChatCompletion();
    const streamedCall = streamed.choices[0]?.message.tool_calls?.[0] as {
      function: { name: string; arguments: string };
    };
    expect(streamedCall.function.name).toBe('get_weather');
    expect(JSON.parse(streamedCall.function.arguments)).toEqual({ city: 'Paris' });
  });

  it('passes JSON mode on', async () => {
    const data = await client.chat.completions.create({
      model,
      response_format: { type: 'json_object' },
      messages: [{ role: 'user', content: 'give json' }],
    });
    if (model.startsWith('anthropic/')) {
      // Anthropic has no JSON mode: the instruction rides in the system prompt.
      expect(JSON.stringify(anthropic.requests.at(-1)?.body)).toContain('JSON object');
    } else {
      expect(JSON.parse(data.choices[0]?.message.content ?? '')).toEqual({ echo: 'give json' });
    }
  });
});

describe('upstream failures', () => {
  it('turns a provider 5xx into 502 provider_error and releases the hold', async () => {
    openai.script({ kind: 'error', status: 500 });
    await expect(
      client.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({ status: 502, error: { type: 'provider_error' } });
  });

  it('waits out a short Retry-After and succeeds, or passes a long one on as 429', async () => {
    const before = openai.requests.length;
    openai.script({ kind: 'rate_limited', retryAfterSeconds: 1 });
    const served = await client.chat.completions.create({
      model: 'openai/gpt-4o',
      messages: [{ role: 'user', content: 'again' }],
    });
    expect(served.choices[0]?.message.content).toBe('echo: again');
    expect(openai.requests.length - before).toBe(2);
    openai.script({ kind: 'rate_limited', retryAfterSeconds: 60 });
    const refused = await client.chat.completions
      .create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 429, error: { type: 'rate_limit_error' } });
    expect((refused as { headers: Headers }).headers.get('retry-after')).toBe('60');
  });

  it('turns a provider that never answers into 504 timeout_error', async () => {
    openai.script({ kind: 'hang' });
    await expect(
      client.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({ status: 504, error: { type: 'timeout_error' } });
  });

  it('passes a provider 4xx on as 400 with the provider’s message', async () => {
    openai.script({
      kind: 'error',
      status: 400,
      body: { error: { message: 'bad things in the request', type: 'invalid_request_error' } },
    });
    await expect(
      client.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({
      status: 400,
      error: { message: expect.stringContaining('bad things in the request') },
    });
  });

  it('falls back to the next model on a retryable failure, charging only the one that served', async () => {
    openai.script({ kind: 'error', status: 503 });
    const { data, response } = await client.chat.completions
      .create({
        model: 'openai/gpt-4o',
        // @ts-expect-error: the fallback list, as OpenRouter takes it
        models: ['anthropic/claude-sonnet-4-5'],
        messages: [{ role: 'user', content: 'fall back' }],
      })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe('echo: fall back');
    expect(response.headers.get('x-model')).toBe('anthropic/claude-sonnet-4-5');
    const holds = await gateway.runtime.database.pool.query<{ status: string }>(
      `SELECT status FROM holds WHERE request_id = $1 ORDER BY created_at`,
      [response.headers.get('x-request-id')],
    );
    await eventually(
      async () =>
        (
          await gateway.runtime.database.pool.query('SELECT status FROM holds WHERE request_id = $1', [
            response.headers.get('x-request-id'),
          ])
        ).rows,
      (rows) => rows.length === 2,
      3000,
    );
    expect(holds.rows.length).toBeLessThanOrEqual(2);
    const charges = await eventually(
      async () =>
        (
          await gateway.runtime.database.pool.query('SELECT model FROM charges WHERE request_id = $1', [
            response.headers.get('x-request-id'),
          ])
        ).rows,
      (rows) => rows.length > 0,
      3000,
    );
    expect(charges).toEqual([{ model: 'anthropic/claude-sonnet-4-5' }]);
  });

  it('reports latency and errors per provider', async () => {
    const health = await json(
      await fetch(`${gateway.url}/v1/health/providers`, { headers: { authorization: `Bearer ${key}` } }),
    );
    const row = health.data.find((r: { provider: string }) => r.provider === 'openai');
    expect(row).toMatchObject({
      requests: expect.any(Number),
      p50_ms: expect.any(Number),
      p95_ms: expect.any(Number),
    });
    expect(row.error_rate).toBeGreaterThan(0);
  });
});

describe('model checks before dispatch', () => {
  it('names the missing key of a provider that is not configured', async () => {
    await expect(
      client.chat.completions.create({
        model: 'groq/llama-3.3-70b-versatile',
        messages: [{ role: 'user', content: 'x' }],
      }),
    ).rejects.toMatchObject({ status: 400, error: { message: expect.stringContaining('GROQ_API_KEY') } });
  });

  it('refuses sampling parameters a reasoning model rejects, and maps max_tokens for it', async () => {
    await expect(
      client.chat.completions.create({
        model: 'openai/o3',
        temperature: 0.2,
        messages: [{ role: 'user', content: 'x' }],
      }),
    ).rejects.toMatchObject({ status: 400, error: { message: expect.stringContaining("'temperature'") } });
    await client.chat.completions.create({
      model: 'openai/o3',
      max_tokens: 20,
      messages: [{ role: 'user', content: 'think' }],
    });
    const sent = openai.requests.at(-1)?.body as Record<string, unknown>;
    expect(sent.max_completion_tokens).toBe(20);
    expect(sent.max_tokens).toBeUndefined();
  });
});
