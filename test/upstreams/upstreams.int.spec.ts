import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Json, json as jsonOf } from '../support/json.ts';
import { startAnthropicUpstream } from './anthropic.ts';
import { startGeminiUpstream } from './gemini.ts';
import { startOpenAiUpstream } from './openai.ts';
import { parseSse, readAll, sseJson } from './sse-reader.ts';
import type { Upstream } from './types.ts';

// Expected numbers follow the token rule in model.ts: prompt = Σ(words + 3) per message, reply = words.
const post = (url: string, headers: Record<string, string>, body: unknown, signal?: AbortSignal) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal,
  });

const weatherTool = {
  name: 'get_weather',
  description: 'Current weather',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('OpenAI simulator', () => {
  let upstream: Upstream;
  const auth = { authorization: 'Bearer sk-test' };
  const chat = (body: Json, headers: Record<string, string> = auth) =>
    post(`${upstream.url}/v1/chat/completions`, headers, { model: 'gpt-4o', ...body });
  const user = (content: string) => ({ role: 'user', content });
  const streamed = async (body: Json) => sseJson(await (await chat({ ...body, stream: true })).text());

  beforeAll(async () => {
    upstream = await startOpenAiUpstream();
  });
  afterAll(async () => {
    await upstream?.close();
  });

  it('answers a chat.completion and records what it was sent', async () => {
    const response = await chat({
      messages: [{ role: 'system', content: 'Be brief.' }, user('hello there friend')],
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(await jsonOf(response)).toMatchObject({
      id: expect.stringMatching(/^chatcmpl-/),
      object: 'chat.completion',
      model: 'gpt-4o',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'echo: hello there friend', refusal: null },
          finish_reason: 'stop',
        },
      ],
      usage: {
        prompt_tokens: 11,
        completion_tokens: 4,
        total_tokens: 15,
        prompt_tokens_details: { cached_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 0 },
      },
    });
    const recorded = upstream.requests.at(-1);
    expect(recorded).toMatchObject({ method: 'POST', path: '/v1/chat/completions', query: {} });
    expect(recorded?.headers.authorization).toBe('Bearer sk-test');
    expect(recorded?.headers['content-type']).toBe('application/json');
    expect(recorded?.body).toMatchObject({
      model: 'gpt-4o',
      messages: [{ role: 'system' }, { role: 'user' }],
    });
  });

  it('streams chunks ending in [DONE], with no usage unless include_usage asks for it', async () => {
    const response = await chat({ messages: [user('one two three')], stream: true });
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const events = parseSse(await response.text());
    expect(events.at(-1)?.data).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && !('usage' in c))).toBe(true);
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '', refusal: null });
    expect(chunks.map((c) => c.choices[0].delta.content ?? '').join('')).toBe('echo: one two three');
    expect(chunks.at(-1).choices[0]).toEqual({ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' });
  });

  it('adds a final usage chunk with empty choices when stream_options.include_usage is true', async () => {
    const chunks = await streamed({
      messages: [user('one two three')],
      stream_options: { include_usage: true },
    });
    const last = chunks.at(-1);
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 4, total_tokens: 10 });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    expect(chunks.at(-2).choices[0].finish_reason).toBe('stop');
  });

  it('calls the first tool when asked about the weather, in JSON and as streamed deltas', async () => {
    const body = {
      messages: [user('what is the weather in Paris?')],
      tools: [{ type: 'function', function: weatherTool }],
    };
    const json = await jsonOf(await chat(body));
    expect(json.choices[0]).toMatchObject({
      message: {
        content: null,
        tool_calls: [
          {
            id: expect.stringMatching(/^call_/),
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      },
      finish_reason: 'tool_calls',
    });
    expect(json.usage.completion_tokens).toBe(2);

    const chunks = await streamed(body);
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls[0]).toEqual({
      index: 0,
      id: expect.stringMatching(/^call_/),
      type: 'function',
      function: { name: 'get_weather', arguments: '' },
    });
    expect(calls.slice(1).every((c: Json) => c.index === 0 && !('id' in c) && !('name' in c.function))).toBe(
      true,
    );
    expect(calls.map((c: Json) => c.function.arguments).join('')).toBe('{"city":"Paris"}');
    expect(chunks.at(-1).choices[0].finish_reason).toBe('tool_calls');
  });

  it('answers in text once the conversation ends with the tool result, or when tool_choice is none', async () => {
    const tools = [{ type: 'function', function: weatherTool }];
    const afterTool = await chat({
      tools,
      messages: [
        user('weather in Paris?'),
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'sunny and warm' },
      ],
    });
    const json = await jsonOf(afterTool);
    expect(json.choices[0].message.content).toBe('echo: weather in Paris?');
    // user 3+3, assistant 0+3, tool 3+3
    expect(json.usage.prompt_tokens).toBe(15);
    const none = await jsonOf(await chat({ tools, tool_choice: 'none', messages: [user('weather?')] }));
    expect(none.choices[0].finish_reason).toBe('stop');
  });

  it('emits reasoning_content and reasoning_tokens for reasoning models, before the answer when streamed', async () => {
    const json = await jsonOf(await chat({ model: 'o3', messages: [user('two words')] }));
    expect(json.choices[0].message).toMatchObject({
      content: 'echo: two words',
      reasoning_content: 'thinking about: two words',
    });
    expect(json.usage).toMatchObject({
      completion_tokens: 7,
      completion_tokens_details: { reasoning_tokens: 4 },
    });

    const chunks = await streamed({ model: 'gpt-5-mini', messages: [user('two words')] });
    const deltas = chunks.map((c) => c.choices[0]?.delta ?? {});
    const lastReasoning = deltas.findLastIndex((d) => typeof d.reasoning_content === 'string');
    const firstContent = deltas.findIndex((d) => typeof d.content === 'string');
    expect(lastReasoning).toBeLessThan(firstContent);
    expect(deltas.map((d) => d.reasoning_content ?? '').join('')).toBe('thinking about: two words');
  });

  it('reports cached tokens when the first system message mentions "cached"', async () => {
    const json = await jsonOf(
      await chat({ messages: [{ role: 'system', content: 'You are cached context.' }, user('hi')] }),
    );
    expect(json.usage).toMatchObject({ prompt_tokens: 11, prompt_tokens_details: { cached_tokens: 7 } });
  });

  it('stops at max_completion_tokens (or max_tokens) with finish_reason length', async () => {
    const json = await jsonOf(await chat({ messages: [user('one two three')], max_completion_tokens: 2 }));
    expect(json.choices[0]).toMatchObject({ message: { content: 'echo: one' }, finish_reason: 'length' });
    expect(json.usage.completion_tokens).toBe(2);
    const chunks = await streamed({ messages: [user('one two three')], max_tokens: 3 });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('echo: one two');
    expect(chunks.at(-1).choices[0].finish_reason).toBe('length');
  });

  it('answers a JSON object in JSON mode', async () => {
    const json = await jsonOf(
      await chat({ messages: [user('hi there')], response_format: { type: 'json_object' } }),
    );
    expect(JSON.parse(json.choices[0].message.content)).toEqual({ echo: 'hi there' });
  });

  it('rejects a missing or empty bearer key with OpenAI’s 401 body', async () => {
    for (const headers of [{}, { authorization: 'Bearer ' }] as Record<string, string>[]) {
      const response = await chat({ messages: [user('hi')] }, headers);
      expect(response.status).toBe(401);
      expect(await jsonOf(response)).toEqual({
        error: {
          message: expect.any(String),
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      });
    }
  });

  it('answers 429 with retry-after and x-ratelimit headers, and 5xx in OpenAI’s error shape', async () => {
    upstream.script({ kind: 'rate_limited', retryAfterSeconds: 2 });
    upstream.script({ kind: 'error', status: 500 });
    const limited = await chat({ messages: [user('hi')] });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('2');
    expect(limited.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(limited.headers.get('x-ratelimit-reset-requests')).toBe('2s');
    expect((await jsonOf(limited)).error).toMatchObject({
      type: 'requests',
      code: 'rate_limit_exceeded',
      param: null,
    });
    const failed = await chat({ messages: [user('hi')] });
    expect(failed.status).toBe(500);
    expect((await jsonOf(failed)).error).toMatchObject({ type: 'server_error', param: null, code: null });
  });

  it('lists models and answers unknown paths with OpenAI’s 404', async () => {
    // By default every id the catalog sends to OpenAI-compatible providers; a test may restrict it.
    const all = await jsonOf(await fetch(`${upstream.url}/v1/models`, { headers: auth }));
    expect(all.object).toBe('list');
    expect(all.data.map((m: Json) => m.id)).toEqual(
      expect.arrayContaining(['gpt-4o', 'omni-moderation-latest']),
    );
    upstream.models?.offer(['gpt-4o', 'o3']);
    const models = await jsonOf(await fetch(`${upstream.url}/v1/models`, { headers: auth }));
    expect(models.data[0]).toEqual({
      id: 'gpt-4o',
      object: 'model',
      created: expect.any(Number),
      owned_by: 'system',
    });
    expect((await fetch(`${upstream.url}/v1/models`)).status).toBe(401);
    upstream.models?.offer();
    // List calls are outside the recorded requests and the script queue.
    expect(upstream.requests.some((r) => r.path === '/v1/models')).toBe(false);
    const missing = await post(`${upstream.url}/v1/embeddingz`, auth, {});
    expect(missing.status).toBe(404);
    expect((await jsonOf(missing)).error.message).toBe('Invalid URL (POST /v1/embeddingz)');
  });

  describe('through the official openai SDK', () => {
    const client = (options: { maxRetries?: number } = {}) =>
      new OpenAI({ apiKey: 'sk-test', baseURL: `${upstream.url}/v1`, maxRetries: options.maxRetries ?? 0 });

    it('lists the models the simulator offers', async () => {
      upstream.models?.offer(['gpt-4o-mini', 'gpt-5']);
      const listed = [];
      for await (const model of client().models.list()) listed.push(model.id);
      upstream.models?.offer();
      expect(listed).toEqual(['gpt-4o-mini', 'gpt-5']);
    });

    it('creates a completion', async () => {
      const completion = await client().chat.completions.create({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'hello there friend' }],
      });
      expect(completion.choices[0]?.message.content).toBe('echo: hello there friend');
      expect(completion.usage?.total_tokens).toBe(10);
      expect(upstream.requests.at(-1)?.headers['user-agent']).toMatch(/OpenAI\/JS/);
    });

    it('streams with usage', async () => {
      const stream = await client().chat.completions.create({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'one two three' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      let usage: OpenAI.CompletionUsage | undefined | null;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        if (chunk.usage) usage = chunk.usage;
      }
      expect(text).toBe('echo: one two three');
      expect(usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 4 });
    });

    it('reassembles streamed tool calls with the SDK’s own accumulator', async () => {
      const stream = client().chat.completions.stream({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'weather in Paris?' }],
        tools: [{ type: 'function', function: weatherTool }],
      });
      const final = await stream.finalChatCompletion();
      expect(final.choices[0]?.finish_reason).toBe('tool_calls');
      const call = final.choices[0]?.message.tool_calls?.[0];
      expect(call?.type === 'function' && call.function).toEqual({
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
      });
    });

    it('parses a JSON-schema answer', async () => {
      const completion = await client().chat.completions.create({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'hi' }],
        response_format: { type: 'json_schema', json_schema: { name: 'echo', schema: { type: 'object' } } },
      });
      expect(JSON.parse(completion.choices[0]?.message.content ?? '')).toEqual({ echo: 'hi' });
    });

    it('surfaces a 429 as RateLimitError, and retries after Retry-After when allowed', async () => {
      upstream.script({ kind: 'rate_limited', retryAfterSeconds: 1 });
      const failure = await client()
        .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
        .catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(OpenAI.RateLimitError);
      expect((failure as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).toBe('1');

      upstream.script({ kind: 'rate_limited', retryAfterSeconds: 1 });
      const before = upstream.requests.length;
      const started = Date.now();
      const completion = await client({ maxRetries: 1 }).chat.completions.create({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(completion.choices[0]?.message.content).toBe('echo: hi');
      expect(upstream.requests.length - before).toBe(2);
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    });

    it('times out on a hung upstream', async () => {
      upstream.script({ kind: 'hang' });
      const failure = await client()
        .chat.completions.create(
          { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
          { timeout: 200 },
        )
        .catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    });
  });
});

describe('Anthropic simulator', () => {
  let upstream: Upstream;
  const auth = { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' };
  const messages = (body: Json, headers: Record<string, string> = auth) =>
    post(`${upstream.url}/v1/messages`, headers, { model: 'claude-sonnet-4-5', max_tokens: 1024, ...body });
  const user = (content: Json) => ({ role: 'user', content });
  const events = async (body: Json) => parseSse(await (await messages({ ...body, stream: true })).text());

  beforeAll(async () => {
    upstream = await startAnthropicUpstream();
  });
  afterAll(async () => {
    await upstream?.close();
  });

  it('lists models in pages as Anthropic does, which the official SDK follows', async () => {
    upstream.models?.offer(['claude-opus-4-6', 'claude-sonnet-4-5-20250929', 'claude-3-haiku-20240307']);
    upstream.models?.pageSize(2);
    const client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: upstream.url, maxRetries: 0 });
    const listed = [];
    for await (const model of client.models.list()) listed.push(model.id);
    expect(listed).toEqual(['claude-opus-4-6', 'claude-sonnet-4-5-20250929', 'claude-3-haiku-20240307']);
    const first = await jsonOf(await fetch(`${upstream.url}/v1/models?limit=2`, { headers: auth }));
    expect(first).toMatchObject({
      has_more: true,
      first_id: 'claude-opus-4-6',
      last_id: 'claude-sonnet-4-5-20250929',
    });
    expect(first.data[0]).toEqual({
      type: 'model',
      id: 'claude-opus-4-6',
      display_name: expect.any(String),
      created_at: expect.any(String),
    });
    expect((await fetch(`${upstream.url}/v1/models`, { headers: { 'x-api-key': 'k' } })).status).toBe(400);
    upstream.models?.offer();
    upstream.models?.pageSize();
  });

  it('answers a message with the top-level system prompt counted', async () => {
    const response = await messages({ system: 'Be brief.', messages: [user('hello there friend')] });
    expect(response.status).toBe(200);
    expect(response.headers.get('request-id')).toMatch(/^req_/);
    expect(await jsonOf(response)).toEqual({
      id: expect.stringMatching(/^msg_/),
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'text', text: 'echo: hello there friend' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: {
        input_tokens: 11,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: 4,
        service_tier: 'standard',
      },
    });
    expect(upstream.requests.at(-1)).toMatchObject({
      path: '/v1/messages',
      headers: { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' },
      body: { system: 'Be brief.', max_tokens: 1024 },
    });
  });

  it('streams the documented event sequence with cumulative usage in message_delta', async () => {
    const response = await messages({
      system: 'Be brief.',
      messages: [user('hello there friend')],
      stream: true,
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const all = parseSse(await response.text());
    expect(all.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const data = all.map((e) => JSON.parse(e.data));
    expect(data.every((d, i) => d.type === all[i]?.event)).toBe(true);
    expect(data[0].message).toMatchObject({
      content: [],
      stop_reason: null,
      usage: { input_tokens: 11, output_tokens: 1 },
    });
    expect(data[1]).toEqual({
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'text', text: '' },
    });
    const text = data.filter((d) => d.type === 'content_block_delta').map((d) => d.delta.text);
    expect(text.join('')).toBe('echo: hello there friend');
    expect(data.at(-2)).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: {
        input_tokens: 11,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: 4,
      },
    });
  });

  it('calls the first tool with tool_use, streamed as input_json_delta fragments', async () => {
    const tools = [
      { name: 'get_weather', description: 'Current weather', input_schema: weatherTool.parameters },
    ];
    const body = { tools, messages: [user('what is the weather in Paris?')] };
    const json = await jsonOf(await messages(body));
    expect(json).toMatchObject({
      content: [
        {
          type: 'tool_use',
          id: expect.stringMatching(/^toolu_/),
          name: 'get_weather',
          input: { city: 'Paris' },
        },
      ],
      stop_reason: 'tool_use',
      usage: { output_tokens: 2 },
    });

    const data = (await events(body)).map((e) => JSON.parse(e.data));
    const start = data.find((d) => d.type === 'content_block_start');
    expect(start.content_block).toEqual({
      type: 'tool_use',
      id: expect.stringMatching(/^toolu_/),
      name: 'get_weather',
      input: {},
    });
    const deltas = data.filter((d) => d.type === 'content_block_delta').map((d) => d.delta);
    expect(deltas.every((d) => d.type === 'input_json_delta')).toBe(true);
    expect(deltas[0].partial_json).toBe('');
    expect(JSON.parse(deltas.map((d) => d.partial_json).join(''))).toEqual({ city: 'Paris' });
    expect(data.find((d) => d.type === 'message_delta').delta.stop_reason).toBe('tool_use');

    const afterTool = await jsonOf(
      await messages({
        tools,
        messages: [
          user('weather in Paris?'),
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'get_weather', input: {} }] },
          user([{ type: 'tool_result', tool_use_id: 't1', content: 'sunny and warm' }]),
        ],
      }),
    );
    expect(afterTool.content).toEqual([{ type: 'text', text: 'echo: weather in Paris?' }]);
    expect(afterTool.usage.input_tokens).toBe(15);
  });

  it('emits a signed thinking block first when thinking is enabled or the model thinks', async () => {
    const json = await jsonOf(
      await messages({ thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [user('two words')] }),
    );
    expect(json.content).toEqual([
      { type: 'thinking', thinking: 'thinking about: two words', signature: expect.any(String) },
      { type: 'text', text: 'echo: two words' },
    ]);
    expect(json.usage.output_tokens).toBe(7);

    const data = (await events({ model: 'claude-thinking-test', messages: [user('two words')] })).map((e) =>
      JSON.parse(e.data),
    );
    const block0 = data.filter((d) => d.index === 0).map((d) => d.delta?.type ?? d.type);
    expect(block0).toEqual([
      'content_block_start',
      'thinking_delta',
      'thinking_delta',
      'thinking_delta',
      'thinking_delta',
      'signature_delta',
      'content_block_stop',
    ]);
    expect(data.find((d) => d.type === 'content_block_start' && d.index === 1).content_block.type).toBe(
      'text',
    );
  });

  it('reports cache_read_input_tokens outside input_tokens when the system prompt mentions "cached"', async () => {
    const system = [{ type: 'text', text: 'You are cached context.', cache_control: { type: 'ephemeral' } }];
    const json = await jsonOf(await messages({ system, messages: [user('hi')] }));
    expect(json.usage).toMatchObject({
      input_tokens: 4,
      cache_read_input_tokens: 7,
      cache_creation_input_tokens: 0,
    });
  });

  it('reports cache_creation_input_tokens for the prompt up to the last cache_control breakpoint', async () => {
    const system = [{ type: 'text', text: 'Be terse and exact.', cache_control: { type: 'ephemeral' } }];
    const marked = user([{ type: 'text', text: 'one two', cache_control: { type: 'ephemeral' } }]);
    // System 4 words + 3; messages 2 + 3 and 1 + 3.
    const cases: [Json, Json][] = [
      [
        { system, messages: [user('hi')] },
        { input_tokens: 4, cache_creation_input_tokens: 7 },
      ],
      [
        { system, messages: [marked, user('hi')] },
        { input_tokens: 4, cache_creation_input_tokens: 12 },
      ],
      [
        { system, cache_control: { type: 'ephemeral' }, messages: [user('hi')] },
        { input_tokens: 0, cache_creation_input_tokens: 11 },
      ],
      [
        { system: 'Be terse and exact.', messages: [user('hi')] },
        { input_tokens: 11, cache_creation_input_tokens: 0 },
      ],
    ];
    for (const [body, usage] of cases)
      expect((await jsonOf(await messages(body))).usage).toMatchObject({
        ...(usage as object),
        cache_read_input_tokens: 0,
      });
  });

  it('stops at max_tokens with stop_reason max_tokens, and answers JSON for a json_schema output format', async () => {
    const cut = await jsonOf(await messages({ max_tokens: 2, messages: [user('one two three')] }));
    expect(cut).toMatchObject({
      content: [{ text: 'echo: one' }],
      stop_reason: 'max_tokens',
      usage: { output_tokens: 2 },
    });
    const json = await jsonOf(
      await messages({
        output_config: { format: { type: 'json_schema', schema: { type: 'object' } } },
        messages: [user('hi')],
      }),
    );
    expect(JSON.parse(json.content[0].text)).toEqual({ echo: 'hi' });
  });

  it('requires x-api-key, anthropic-version and max_tokens', async () => {
    const noKey = await messages({ messages: [user('hi')] }, { 'anthropic-version': '2023-06-01' });
    expect(noKey.status).toBe(401);
    expect(await jsonOf(noKey)).toEqual({
      type: 'error',
      error: { type: 'authentication_error', message: expect.any(String) },
      request_id: expect.any(String),
    });
    const noVersion = await messages({ messages: [user('hi')] }, { 'x-api-key': 'k' });
    expect(noVersion.status).toBe(400);
    expect((await jsonOf(noVersion)).error.type).toBe('invalid_request_error');
    const noMax = await post(`${upstream.url}/v1/messages`, auth, {
      model: 'claude-sonnet-4-5',
      messages: [user('hi')],
    });
    expect(noMax.status).toBe(400);
    expect((await jsonOf(noMax)).error).toEqual({
      type: 'invalid_request_error',
      message: 'max_tokens: Field required',
    });
  });

  it('answers 429 rate_limit_error with retry-after and 529 overloaded_error', async () => {
    upstream.script({ kind: 'rate_limited', retryAfterSeconds: 3 });
    upstream.script({ kind: 'error', status: 529 });
    const limited = await messages({ messages: [user('hi')] });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    expect(limited.headers.get('anthropic-ratelimit-requests-remaining')).toBe('0');
    expect((await jsonOf(limited)).error.type).toBe('rate_limit_error');
    const overloaded = await messages({ messages: [user('hi')] });
    expect(overloaded.status).toBe(529);
    expect((await jsonOf(overloaded)).error).toEqual({ type: 'overloaded_error', message: 'Overloaded' });
  });

  it('counts tokens', async () => {
    const response = await post(`${upstream.url}/v1/messages/count_tokens`, auth, {
      model: 'claude-sonnet-4-5',
      system: 'Be brief.',
      messages: [user('hello there friend')],
    });
    expect(await jsonOf(response)).toEqual({ input_tokens: 11 });
  });
});

describe('Gemini simulator', () => {
  let upstream: Upstream;
  const auth = { 'x-goog-api-key': 'AIza-test' };
  const url = (model: string, method: string, query = '') =>
    `${upstream.url}/v1beta/models/${model}:${method}${query}`;
  const generate = (body: Json, model = 'gemini-2.5-flash') =>
    post(url(model, 'generateContent'), auth, body);
  const user = (text: string) => ({ role: 'user', parts: [{ text }] });
  const streamed = async (body: Json, model = 'gemini-2.5-flash') =>
    sseJson(await (await post(url(model, 'streamGenerateContent', '?alt=sse'), auth, body)).text());
  const joined = (chunks: Json[]) =>
    chunks
      .flatMap((c) => c.candidates[0].content.parts.map((p: Json) => (p.thought ? '' : (p.text ?? ''))))
      .join('');

  beforeAll(async () => {
    upstream = await startGeminiUpstream();
  });
  afterAll(async () => {
    await upstream?.close();
  });

  it('lists models in pages with resource names and generation methods, as models.list does', async () => {
    upstream.models?.offer(['gemini-2.5-flash', 'gemini-embedding-001', 'veo-3.0-generate-001']);
    const first = await jsonOf(await fetch(`${upstream.url}/v1beta/models?pageSize=2`, { headers: auth }));
    expect(first.models.map((m: Json) => m.name)).toEqual([
      'models/gemini-2.5-flash',
      'models/gemini-embedding-001',
    ]);
    expect(first.models[0].supportedGenerationMethods).toContain('generateContent');
    expect(first.models[1].supportedGenerationMethods).toContain('embedContent');
    const second = await jsonOf(
      await fetch(`${upstream.url}/v1beta/models?pageSize=2&key=AIza-test&pageToken=${first.nextPageToken}`),
    );
    expect(second.models.map((m: Json) => m.name)).toEqual(['models/veo-3.0-generate-001']);
    expect(second.nextPageToken).toBeUndefined();
    expect((await fetch(`${upstream.url}/v1beta/models`)).status).toBe(403);
    upstream.models?.offer();
  });

  it('answers generateContent with usageMetadata and modelVersion', async () => {
    const response = await generate({
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      contents: [user('hello there friend')],
    });
    expect(response.status).toBe(200);
    expect(await jsonOf(response)).toEqual({
      candidates: [
        {
          content: { role: 'model', parts: [{ text: 'echo: hello there friend' }] },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: {
        promptTokenCount: 11,
        candidatesTokenCount: 4,
        totalTokenCount: 15,
        promptTokensDetails: [{ modality: 'TEXT', tokenCount: 11 }],
      },
      modelVersion: 'gemini-2.5-flash',
      responseId: expect.any(String),
    });
    expect(upstream.requests.at(-1)).toMatchObject({
      path: '/v1beta/models/gemini-2.5-flash:generateContent',
      headers: { 'x-goog-api-key': 'AIza-test' },
    });
  });

  it('streams SSE chunks with CRLF framing, finishReason and full usage on the last chunk only', async () => {
    const response = await post(url('gemini-2.5-flash', 'streamGenerateContent', '?alt=sse'), auth, {
      contents: [user('one two three')],
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const text = await response.text();
    expect(text).toMatch(/^data: \{.*\}\r\n\r\n/);
    expect(text).not.toContain('[DONE]');
    const chunks = sseJson(text);
    expect(joined(chunks)).toBe('echo: one two three');
    expect(chunks.slice(0, -1).every((c) => !('finishReason' in c.candidates[0]))).toBe(true);
    expect(chunks[0].usageMetadata).toEqual({ promptTokenCount: 6, totalTokenCount: 6 });
    expect(chunks.at(-1).candidates[0].finishReason).toBe('STOP');
    expect(chunks.at(-1).usageMetadata).toMatchObject({
      promptTokenCount: 6,
      candidatesTokenCount: 4,
      totalTokenCount: 10,
    });
    expect(upstream.requests.at(-1)?.query).toEqual({ alt: 'sse' });
  });

  it('streams a JSON array without alt=sse, and takes the key from ?key=', async () => {
    const response = await fetch(url('gemini-2.5-flash', 'streamGenerateContent', '?key=AIza-query'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [user('one two')] }),
    });
    expect(response.status).toBe(200);
    expect(joined(await jsonOf(response))).toBe('echo: one two');
    expect(upstream.requests.at(-1)?.query).toEqual({ key: 'AIza-query' });
  });

  it('answers with a whole functionCall part, in JSON and in one stream chunk', async () => {
    const tools = [{ functionDeclarations: [weatherTool] }];
    const body = { tools, contents: [user('what is the weather in Paris?')] };
    const json = await jsonOf(await generate(body));
    expect(json.candidates[0]).toMatchObject({
      content: { parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
      finishReason: 'STOP',
    });
    expect(json.usageMetadata.candidatesTokenCount).toBe(2);
    const chunks = await streamed(body);
    expect(chunks).toHaveLength(1);
    expect(chunks[0].candidates[0].content.parts).toEqual([
      { functionCall: { name: 'get_weather', args: { city: 'Paris' } } },
    ]);

    const afterTool = await jsonOf(
      await generate({
        tools,
        contents: [
          user('weather in Paris?'),
          { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: {} } }] },
          {
            role: 'user',
            parts: [{ functionResponse: { name: 'get_weather', response: { sky: 'sunny' } } }],
          },
        ],
      }),
    );
    expect(afterTool.candidates[0].content.parts).toEqual([{ text: 'echo: weather in Paris?' }]);
    // user 3+3, model 0+3, functionResponse '{"sky":"sunny"}' 1+3
    expect(afterTool.usageMetadata.promptTokenCount).toBe(13);
  });

  it('reports thoughtsTokenCount for thinking, with thought parts only when includeThoughts is set', async () => {
    const json = await jsonOf(
      await generate({
        contents: [user('two words')],
        generationConfig: { thinkingConfig: { includeThoughts: true } },
      }),
    );
    expect(json.candidates[0].content.parts).toEqual([
      { text: 'thinking about: two words', thought: true },
      { text: 'echo: two words' },
    ]);
    expect(json.usageMetadata).toMatchObject({
      candidatesTokenCount: 3,
      thoughtsTokenCount: 4,
      totalTokenCount: 12,
    });

    const hidden = await jsonOf(
      await generate({ contents: [user('two words')] }, 'gemini-2.0-flash-thinking-exp'),
    );
    expect(hidden.candidates[0].content.parts).toEqual([{ text: 'echo: two words' }]);
    expect(hidden.usageMetadata.thoughtsTokenCount).toBe(4);

    const chunks = await streamed({
      contents: [user('two words')],
      generationConfig: { thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } },
    });
    const thoughts = chunks.flatMap((c) => c.candidates[0].content.parts).filter((p: Json) => p.thought);
    expect(thoughts.map((p: Json) => p.text).join('')).toBe('thinking about: two words');
  });

  it('reports cachedContentTokenCount, stops at maxOutputTokens, and answers JSON for responseMimeType', async () => {
    const cached = await jsonOf(
      await generate({
        systemInstruction: { parts: [{ text: 'You are cached context.' }] },
        contents: [user('hi')],
      }),
    );
    expect(cached.usageMetadata).toMatchObject({ promptTokenCount: 11, cachedContentTokenCount: 7 });
    const cut = await jsonOf(
      await generate({ contents: [user('one two three')], generationConfig: { maxOutputTokens: 2 } }),
    );
    expect(cut.candidates[0]).toMatchObject({
      content: { parts: [{ text: 'echo: one' }] },
      finishReason: 'MAX_TOKENS',
    });
    const json = await jsonOf(
      await generate({
        contents: [user('hi')],
        generationConfig: { responseMimeType: 'application/json', responseSchema: { type: 'OBJECT' } },
      }),
    );
    expect(JSON.parse(json.candidates[0].content.parts[0].text)).toEqual({ echo: 'hi' });
  });

  it('rejects a request without a key in Google’s error shape', async () => {
    const response = await fetch(url('gemini-2.5-flash', 'generateContent'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [user('hi')] }),
    });
    expect(response.status).toBe(403);
    expect(await jsonOf(response)).toEqual({
      error: { code: 403, message: expect.any(String), status: 'PERMISSION_DENIED' },
    });
  });

  it('answers 429 RESOURCE_EXHAUSTED with a RetryInfo delay and no Retry-After header, and 503 UNAVAILABLE', async () => {
    upstream.script({ kind: 'rate_limited', retryAfterSeconds: 7 });
    upstream.script({ kind: 'error', status: 503 });
    const limited = await generate({ contents: [user('hi')] });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBeNull();
    const body = await jsonOf(limited);
    expect(body.error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });
    expect(body.error.details).toContainEqual({
      '@type': 'type.googleapis.com/google.rpc.RetryInfo',
      retryDelay: '7s',
    });
    const unavailable = await generate({ contents: [user('hi')] });
    expect(unavailable.status).toBe(503);
    expect((await jsonOf(unavailable)).error).toEqual({
      code: 503,
      message: expect.any(String),
      status: 'UNAVAILABLE',
    });
  });

  it('counts tokens', async () => {
    const response = await post(url('gemini-2.5-flash', 'countTokens'), auth, {
      contents: [user('hello there friend')],
    });
    expect(await jsonOf(response)).toMatchObject({ totalTokens: 6 });
  });
});

interface Target {
  name: string;
  start(): Promise<Upstream>;
  call(upstream: Upstream, stream: boolean, signal?: AbortSignal): Promise<Response>;
}

const targets: Target[] = [
  {
    name: 'OpenAI',
    start: startOpenAiUpstream,
    call: (u, stream, signal) =>
      post(
        `${u.url}/v1/chat/completions`,
        { authorization: 'Bearer k' },
        { model: 'gpt-4o', stream, messages: [{ role: 'user', content: 'one two three four' }] },
        signal,
      ),
  },
  {
    name: 'Anthropic',
    start: startAnthropicUpstream,
    call: (u, stream, signal) =>
      post(
        `${u.url}/v1/messages`,
        { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
        {
          model: 'claude-sonnet-4-5',
          max_tokens: 100,
          stream,
          messages: [{ role: 'user', content: 'one two three four' }],
        },
        signal,
      ),
  },
  {
    name: 'Gemini',
    start: startGeminiUpstream,
    call: (u, stream, signal) =>
      post(
        `${u.url}/v1beta/models/gemini-2.5-flash:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
        { 'x-goog-api-key': 'k' },
        { contents: [{ role: 'user', parts: [{ text: 'one two three four' }] }] },
        signal,
      ),
  },
];

describe.each(targets)('$name simulator scripted behaviours', (target) => {
  let upstream: Upstream;
  beforeAll(async () => {
    upstream = await target.start();
  });
  afterAll(async () => {
    await upstream?.close();
  });

  it('consumes scripts in order, then behaves normally', async () => {
    upstream.script({ kind: 'error', status: 500 });
    upstream.script({ kind: 'error', status: 400, body: { custom: true }, headers: { 'x-custom': 'yes' } });
    const first = await target.call(upstream, false);
    const second = await target.call(upstream, false);
    const third = await target.call(upstream, false);
    expect([first.status, second.status, third.status]).toEqual([500, 400, 200]);
    expect(second.headers.get('x-custom')).toBe('yes');
    expect(await jsonOf(second)).toEqual({ custom: true });
    await Promise.all([first.text(), third.text()]);
  });

  it('delays the first byte', async () => {
    upstream.script({ kind: 'slow_first_byte', ms: 300 });
    const started = Date.now();
    const response = await target.call(upstream, false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(response.status).toBe(200);
    await jsonOf(response);
  });

  it('hangs until the client gives up, and records the request', async () => {
    upstream.script({ kind: 'hang' });
    const before = upstream.requests.length;
    const started = Date.now();
    const failure = await target.call(upstream, false, AbortSignal.timeout(200)).catch((e: unknown) => e);
    expect((failure as Error).name).toBe('TimeoutError');
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(upstream.requests.length).toBe(before + 1);
  });

  it('drops the connection after the given number of stream chunks', async () => {
    upstream.script({ kind: 'disconnect_mid_stream', afterChunks: 2 });
    const response = await target.call(upstream, true);
    expect(response.status).toBe(200);
    const { text, failure } = await readAll(response);
    expect(failure).toBeDefined();
    expect(parseSse(text)).toHaveLength(2);
  });

  it('drops a JSON reply halfway through its body', async () => {
    upstream.script({ kind: 'disconnect_mid_stream', afterChunks: 1 });
    const response = await target.call(upstream, false);
    await expect(jsonOf(response)).rejects.toThrow();
  });

  it('spaces streamed chunks out when asked', async () => {
    upstream.script({ kind: 'ok', chunkDelayMs: 40 });
    const started = Date.now();
    const { text, failure } = await readAll(await target.call(upstream, true));
    expect(failure).toBeUndefined();
    const count = parseSse(text).length;
    expect(Date.now() - started).toBeGreaterThanOrEqual((count - 1) * 40 - 10);
  });

  it('closes while a request hangs', async () => {
    const own = await target.start();
    own.script({ kind: 'hang' });
    const pending = target.call(own, false).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await own.close();
    expect(await pending).toBeInstanceOf(Error);
  });
});
