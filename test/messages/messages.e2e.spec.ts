import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { startAnthropicUpstream } from '../upstreams/anthropic.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

let gateway: TestGateway;
let openai: Upstream;
let anthropic: Upstream;
let client: Anthropic;
let key: string;

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startOpenAiUpstream(), startAnthropicUpstream()]);
  gateway = await startTestGateway({
    OPENAI_API_KEY: 'sk-sim-openai',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    ANTHROPIC_API_KEY: 'sk-sim-anthropic',
    ANTHROPIC_BASE_URL: anthropic.url,
  });
  const account = await json(await gateway.admin('/accounts', { name: 'anthropic-sdk' }));
  key = account.key;
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 500, reference: 'p' });
  // The SDK appends /v1/messages itself, so its base URL is the gateway's root; it sends the key as x-api-key.
  client = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.close();
  await Promise.all([openai?.close(), anthropic?.close()]);
});

const say = (text: string) => [{ role: 'user' as const, content: text }];

/** The raw event stream: each frame's SSE event name and its parsed data. */
async function rawEvents(
  body: Record<string, unknown>,
): Promise<{ event: string; data: Record<string, unknown> }[]> {
  const response = await fetch(`${gateway.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ ...body, stream: true }),
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const frames = (await response.text()).split('\n\n').filter((frame) => frame !== '');
  return frames.map((frame) => {
    const [eventLine, dataLine, ...rest] = frame.split('\n');
    expect(rest).toEqual([]);
    return {
      event: eventLine?.replace(/^event: /, '') ?? '',
      data: JSON.parse(dataLine?.replace(/^data: /, '') ?? ''),
    };
  });
}

describe('/v1/messages through the official @anthropic-ai/sdk', () => {
  it('answers a message, with the gateway’s headers, and bills it under the request’s tag', async () => {
    const { data, response } = await client.messages
      .create(
        { model: 'local/echo', max_tokens: 64, messages: say('Bonjour, passerelle') },
        { headers: { 'x-gw-tag': 'messages-e2e' } },
      )
      .withResponse();
    expect(data).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'local/echo',
      content: [{ type: 'text', text: 'Bonjour, passerelle' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    });
    expect(data.id).toMatch(/^msg_/);
    expect(data.usage.input_tokens).toBeGreaterThan(0);
    expect(data.usage.output_tokens).toBeGreaterThan(0);
    expect(response.headers.get('x-model')).toBe('local/echo');
    expect(response.headers.get('x-provider')).toBe('local');
    // No temperature: the provider samples, so the cache neither looks it up nor stores it (docs/cache.md).
    expect(response.headers.get('x-cache-status')).toBe('skip');
    expect(Number(response.headers.get('x-latency-ms'))).toBeGreaterThanOrEqual(0);
    const cost = Number(response.headers.get('x-cost-cents'));
    expect(cost).toBeGreaterThan(0);
    const usage = await eventually(
      async () =>
        json(await fetch(`${gateway.url}/v1/usage/by-tag`, { headers: { authorization: `Bearer ${key}` } })),
      (u) => u.data.some((row: { tag: string }) => row.tag === 'messages-e2e'),
    );
    const row = usage.data.find((r: { tag: string }) => r.tag === 'messages-e2e');
    expect(row.requests).toBe(1);
    expect(row.cost_cents).toBeCloseTo(cost, 7);
  });

  it('stops at max_tokens with stop_reason max_tokens', async () => {
    const data = await client.messages.create({
      model: 'local/echo',
      max_tokens: 2,
      messages: say('alpha beta gamma delta epsilon'),
    });
    expect(data.stop_reason).toBe('max_tokens');
    expect(data.usage.output_tokens).toBe(2);
  });

  it('streams: the SDK’s accumulator rebuilds the message', async () => {
    const stream = client.messages.stream({
      model: 'local/echo',
      max_tokens: 64,
      messages: say('one two three four five'),
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const message = await stream.finalMessage();
    expect(types).toEqual([
      'message_start',
      'content_block_start',
      ...Array(5).fill('content_block_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(message.content).toEqual([{ type: 'text', text: 'one two three four five' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage.output_tokens).toBe(5);
    expect(message.model).toBe('local/echo');
  });

  it('frames each streamed event as `event: <type>` with that type in its data', async () => {
    const events = await rawEvents({ model: 'local/echo', max_tokens: 64, messages: say('hello world') });
    for (const { event, data } of events) expect(data.type).toBe(event);
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events[1]?.data).toEqual({
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'text', text: '' },
    });
    expect(events[2]?.data).toEqual({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: 'hello ' },
    });
    expect(events[5]?.data).toMatchObject({
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 2 },
    });
  });

  it('counts tokens as the gateway counts the same request’s input', async () => {
    const request = { model: 'local/echo', system: 'Be brief.', messages: say('How many tokens is this?') };
    const counted = await client.messages.countTokens(request);
    const served = await client.messages.create({ ...request, max_tokens: 64 });
    expect(counted.input_tokens).toBeGreaterThan(0);
    expect(counted.input_tokens).toBe(served.usage.input_tokens);
    // Any model of the catalog, whether or not it could be called.
    const gemini = await client.messages.countTokens({ ...request, model: 'google/gemini-2.5-flash' });
    expect(gemini.input_tokens).toBe(counted.input_tokens);
  });

  it('round-trips a tool call: tool_use out, tool_result back in, through an OpenAI-compatible model', async () => {
    const tools: Anthropic.Tool[] = [
      {
        name: 'get_weather',
        description: 'Current weather of a city',
        input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
    ];
    const question = say('What is the weather in Paris?');
    const first = await client.messages.create({
      model: 'openai/gpt-4o',
      max_tokens: 200,
      tools,
      messages: question,
    });
    expect(first.stop_reason).toBe('tool_use');
    const call = first.content.find((block) => block.type === 'tool_use');
    expect(call).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } });
    expect(openai.requests.at(-1)?.body).toMatchObject({
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Current weather of a city',
            parameters: tools[0]?.input_schema,
          },
        },
      ],
    });

    const second = await client.messages.create({
      model: 'openai/gpt-4o',
      max_tokens: 200,
      tools,
      messages: [
        ...question,
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: call?.id ?? '', content: 'Sunny, 21 °C' }],
        },
      ],
    });
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content).toEqual([{ type: 'text', text: 'echo: What is the weather in Paris?' }]);
    expect(openai.requests.at(-1)?.body).toMatchObject({
      messages: [
        { role: 'user', content: 'What is the weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: call?.id,
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: call?.id, content: 'Sunny, 21 °C' },
      ],
    });
  });

  it('streams a tool call as input_json_delta fragments the SDK reassembles', async () => {
    const stream = client.messages.stream({
      model: 'openai/gpt-4o',
      max_tokens: 200,
      tools: [{ name: 'get_weather', input_schema: { type: 'object' } }],
      messages: say('weather in Paris, please'),
    });
    const deltas: string[] = [];
    stream.on('streamEvent', (event) => {
      if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta') {
        deltas.push(event.delta.partial_json);
      }
    });
    const message = await stream.finalMessage();
    expect(deltas.length).toBeGreaterThan(1);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([
      { type: 'tool_use', id: expect.any(String), name: 'get_weather', input: { city: 'Paris' } },
    ]);
  });

  it('passes an Anthropic model’s request through natively, thinking and cached input included', async () => {
    const request = {
      model: 'anthropic/claude-sonnet-4-5',
      max_tokens: 8000,
      system: 'Use the cached context.',
      thinking: { type: 'enabled' as const, budget_tokens: 2048 },
      messages: say('Hello there'),
    };
    const message = await client.messages.create(request);
    // Untranslated: the client's own thinking budget and system prompt reach the provider as sent.
    expect(anthropic.requests.at(-1)?.body).toMatchObject({
      model: 'claude-sonnet-4-5',
      system: 'Use the cached context.',
      thinking: { type: 'enabled', budget_tokens: 2048 },
      max_tokens: 8000,
    });
    expect(message.id).toMatch(/^msg_sim\d+$/);
    expect(message.model).toBe('anthropic/claude-sonnet-4-5');
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'thinking about: Hello there', signature: expect.any(String) },
      { type: 'text', text: 'echo: Hello there' },
    ]);
    // The simulator's token rule: 7 cached system tokens, 5 for the user turn, 3 + 4 output words.
    expect(message.usage).toMatchObject({ input_tokens: 5, cache_read_input_tokens: 7, output_tokens: 7 });

    const streamed = await client.messages.stream(request).finalMessage();
    expect(streamed.content).toEqual(message.content);
    expect(streamed.usage).toMatchObject({ input_tokens: 5, cache_read_input_tokens: 7, output_tokens: 7 });

    // Both billed from the provider's own usage, the cached input priced apart.
    const charges = await eventually(
      async () =>
        (
          await gateway.runtime.database.pool.query<{
            usage_reported: boolean;
            lines: { item: string; quantity: number }[];
          }>(
            `SELECT usage_reported, lines FROM charges WHERE model = 'anthropic/claude-sonnet-4-5' ORDER BY occurred_at`,
          )
        ).rows,
      (rows) => rows.length >= 2,
      3000,
    );
    for (const charge of charges.slice(-2)) {
      expect(charge.usage_reported).toBe(true);
      expect(charge.lines).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ item: 'input_tokens', quantity: 5 }),
          expect.objectContaining({ item: 'cached_input_tokens', quantity: 7 }),
          expect.objectContaining({ item: 'output_tokens', quantity: 7 }),
        ]),
      );
    }
  });

  it('ends a stream that fails upstream with an error event', async () => {
    openai.script({ kind: 'disconnect_mid_stream', afterChunks: 2 });
    const events = await rawEvents({
      model: 'openai/gpt-4o',
      max_tokens: 64,
      messages: say('one two three four'),
    });
    expect(events[0]?.event).toBe('message_start');
    expect(events.at(-1)).toMatchObject({
      event: 'error',
      data: { type: 'error', error: { type: 'provider_error', code: 502 } },
    });
    openai.script({ kind: 'disconnect_mid_stream', afterChunks: 2 });
    await expect(
      client.messages
        .stream({ model: 'openai/gpt-4o', max_tokens: 64, messages: say('one two three') })
        .finalMessage(),
    ).rejects.toBeInstanceOf(Anthropic.APIError);
  });

  it('refuses in Anthropic’s error shape, mapped onto the SDK’s error classes', async () => {
    await expect(
      client.messages.create({ model: 'nope/model', max_tokens: 8, messages: say('x') }),
    ).rejects.toSatisfy(
      (error) =>
        error instanceof Anthropic.NotFoundError &&
        (error.type as string) === 'model_not_found' &&
        /nope\/model/.test(error.apiMessage ?? ''),
    );
    await expect(
      client.messages.countTokens({ model: 'nope/model', messages: say('x') }),
    ).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    await expect(
      // @ts-expect-error max_tokens is required, and the gateway says so
      client.messages.create({ model: 'local/echo', messages: say('x') }),
    ).rejects.toSatisfy(
      (error) =>
        error instanceof Anthropic.BadRequestError &&
        error.type === 'invalid_request_error' &&
        /max_tokens/.test(error.apiMessage ?? ''),
    );

    const stranger = new Anthropic({ apiKey: 'sk-gw-wrong', baseURL: gateway.url, maxRetries: 0 });
    await expect(
      stranger.messages.create({ model: 'local/echo', max_tokens: 8, messages: say('x') }),
    ).rejects.toSatisfy(
      (error) => error instanceof Anthropic.AuthenticationError && error.type === 'authentication_error',
    );

    const broke = await json(await gateway.admin('/accounts', { name: 'broke' }));
    const poor = new Anthropic({ apiKey: broke.key, baseURL: gateway.url, maxRetries: 0 });
    await expect(
      poor.messages.create({ model: 'local/echo', max_tokens: 8, messages: say('x') }),
    ).rejects.toSatisfy(
      (error) =>
        error instanceof Anthropic.APIError && error.status === 402 && error.type === 'billing_error',
    );
  });

  it('sends the whole error body (type, error, request id), also for what the /v1 hooks refuse', async () => {
    const post = (headers: Record<string, string>, body: unknown) =>
      fetch(`${gateway.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const invalid = await post(
      { authorization: `Bearer ${key}` },
      { model: 'local/echo', max_tokens: 0, messages: say('x') },
    );
    expect(invalid.status).toBe(400);
    expect(await json(invalid)).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringMatching(/max_tokens/), code: 400 },
      request_id: invalid.headers.get('x-request-id'),
    });
    const unknownKey = await post(
      { 'x-api-key': 'sk-gw-wrong' },
      { model: 'local/echo', max_tokens: 8, messages: say('x') },
    );
    expect(unknownKey.status).toBe(401);
    expect(await json(unknownKey)).toEqual({
      type: 'error',
      error: { type: 'authentication_error', message: expect.stringMatching(/API key/), code: 401 },
      request_id: unknownKey.headers.get('x-request-id'),
    });
  });

  it('bills a native stream the client abandons for what was produced, not the partial usage', async () => {
    anthropic.script({ kind: 'ok', chunkDelayMs: 60 });
    const controller = new AbortController();
    const response = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: 'anthropic/claude-sonnet-4-5',
        max_tokens: 500,
        stream: true,
        messages: say(Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ')),
      }),
      signal: controller.signal,
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let seen = '';
    while (!seen.includes('word3')) seen += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    const rows = await eventually(
      async () =>
        (
          await gateway.runtime.database.pool.query<{
            usage_reported: boolean;
            lines: { item: string; quantity: number }[];
          }>('SELECT usage_reported, lines FROM charges WHERE request_id = $1', [
            response.headers.get('x-request-id'),
          ])
        ).rows,
      (r) => r.length === 1,
      5000,
    );
    expect(rows[0]?.usage_reported).toBe(false);
    const output = rows[0]?.lines.find((l) => l.item === 'output_tokens')?.quantity ?? 0;
    expect(output).toBeGreaterThan(1);
    expect(output).toBeLessThan(40);
  });
});
