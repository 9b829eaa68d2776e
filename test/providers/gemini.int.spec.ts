import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatBody, ChatChunk, ReportedUsage, Upstream } from '../../src/contracts/chat.ts';
import { UpstreamError } from '../../src/providers/errors.ts';
import { geminiChat } from '../../src/providers/gemini/chat.ts';
import type { Json } from '../support/json.ts';
import { startGeminiUpstream } from '../upstreams/gemini.ts';
import type { Upstream as Simulator } from '../upstreams/types.ts';

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

const usage = (promptTokens: number, completionTokens: number, extra: Partial<ReportedUsage> = {}) => ({
  promptTokens,
  completionTokens,
  cachedPromptTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  ...extra,
});

describe('Gemini adapter against the Gemini simulator', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startGeminiUpstream();
  });
  afterAll(async () => {
    await sim?.close();
  });

  /** gemini-2.0-flash does not think; gemini-2.5-flash does (quirks.reasoning, as the catalog has it). */
  const upstream = (model = 'gemini-2.0-flash', timeoutMs = 5_000): Upstream => ({
    model,
    baseUrl: `${sim.url}/`,
    apiKey: 'AIza-test',
    timeoutMs,
    quirks: { noSampling: false, maxTokensField: 'max_tokens', reasoning: model.startsWith('gemini-2.5') },
  });
  const complete = (body: ChatBody, model?: string, timeoutMs?: number) =>
    geminiChat.complete({ body, upstream: upstream(model, timeoutMs), signal: new AbortController().signal });
  const stream = async (body: ChatBody, model?: string) => {
    const items: { chunk: ChatChunk; usage?: ReportedUsage }[] = [];
    const call = { body, upstream: upstream(model), signal: new AbortController().signal };
    for await (const item of geminiChat.stream(call)) items.push(item);
    return items;
  };
  const deltas = (items: { chunk: ChatChunk }[]): Json[] =>
    items.flatMap(({ chunk }) => (chunk.choices as Json[]).map((c) => c.delta));
  const joined = (items: { chunk: ChatChunk }[], field: string) =>
    deltas(items)
      .map((d) => d[field] ?? '')
      .join('');
  const finishes = (items: { chunk: ChatChunk }[]) =>
    items.flatMap(({ chunk }) => (chunk.choices as Json[]).flatMap((c) => c.finish_reason ?? []));
  const user = (content: string) => ({ role: 'user', content });

  it('answers a plain completion in the chat-completions format', async () => {
    const { completion, usage: reported } = await complete({
      messages: [{ role: 'system', content: 'Be brief.' }, user('hello there friend')],
    });
    expect(completion).toMatchObject({
      object: 'chat.completion',
      model: 'gemini-2.0-flash',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'echo: hello there friend' },
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 },
    });
    expect(reported).toEqual(usage(11, 4));
    expect(sim.requests.at(-1)).toMatchObject({
      path: '/v1beta/models/gemini-2.0-flash:generateContent',
      headers: { 'x-goog-api-key': 'AIza-test' },
      body: { systemInstruction: { parts: [{ text: 'Be brief.' }] } },
    });
  });

  it('streams a completion that reassembles, with usage once, in a final chunk of its own', async () => {
    const items = await stream({ messages: [user('one two three')] });
    expect(deltas(items)[0]).toEqual({ role: 'assistant', content: '' });
    expect(joined(items, 'content')).toBe('echo: one two three');
    expect(finishes(items)).toEqual(['stop']);
    expect(items.filter((item) => item.usage)).toHaveLength(1);
    const last = items.at(-1);
    expect(last?.chunk).toMatchObject({
      object: 'chat.completion.chunk',
      choices: [],
      usage: { prompt_tokens: 6, completion_tokens: 4, total_tokens: 10 },
    });
    expect(last?.usage).toEqual(usage(6, 4));
    expect(sim.requests.at(-1)).toMatchObject({
      path: '/v1beta/models/gemini-2.0-flash:streamGenerateContent',
      query: { alt: 'sse' },
    });
  });

  it('returns a tool call, and sends the tool result back as a functionResponse', async () => {
    const question = user('what is the weather in Paris?');
    const first = await complete({ messages: [question], tools: [weatherTool] });
    const message = (first.completion.choices[0] as Json).message;
    expect(first.completion.choices[0]).toMatchObject({ finish_reason: 'tool_calls' });
    expect(message).toEqual({
      role: 'assistant',
      content: null,
      refusal: null,
      tool_calls: [
        { id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      ],
    });
    expect(first.usage).toEqual(usage(9, 2));

    const second = await complete({
      messages: [question, message, { role: 'tool', tool_call_id: 'call_0', content: 'sunny' }],
      tools: [weatherTool],
    });
    expect((second.completion.choices[0] as Json).message.content).toBe(
      'echo: what is the weather in Paris?',
    );
    expect(sim.requests.at(-1)?.body).toMatchObject({
      contents: [
        { role: 'user' },
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
        {
          role: 'user',
          parts: [{ functionResponse: { name: 'get_weather', response: { content: 'sunny' } } }],
        },
      ],
    });
  });

  it('streams a tool call as one indexed tool-call delta', async () => {
    const items = await stream({ messages: [user('weather in Paris?')], tools: [weatherTool] });
    const calls = deltas(items).flatMap((d) => d.tool_calls ?? []);
    expect(calls).toEqual([
      {
        index: 0,
        id: 'call_0',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
      },
    ]);
    expect(finishes(items)).toEqual(['tool_calls']);
    expect(items.at(-1)?.usage).toEqual(usage(6, 2));
  });

  it('returns thoughts as reasoning_content and counts them as reasoning tokens', async () => {
    const body = { messages: [user('two words')], reasoning_effort: 'low' };
    const { completion, usage: reported } = await complete(body, 'gemini-2.5-flash');
    expect((completion.choices[0] as Json).message).toEqual({
      role: 'assistant',
      content: 'echo: two words',
      refusal: null,
      reasoning_content: 'thinking about: two words',
    });
    expect(sim.requests.at(-1)?.body).toMatchObject({
      generationConfig: { thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } },
    });
    // candidatesTokenCount 3 + thoughtsTokenCount 4
    expect(reported).toEqual(usage(5, 7, { reasoningTokens: 4 }));
    expect(completion.usage).toMatchObject({
      completion_tokens: 7,
      completion_tokens_details: { reasoning_tokens: 4 },
    });

    const items = await stream(body, 'gemini-2.5-flash');
    expect(joined(items, 'reasoning_content')).toBe('thinking about: two words');
    expect(joined(items, 'content')).toBe('echo: two words');
    expect(items.at(-1)?.usage).toEqual(usage(5, 7, { reasoningTokens: 4 }));
  });

  it('carries a thinking model’s function-call signature to the client and back', async () => {
    const question = user('weather in Paris?');
    const { completion } = await complete({ messages: [question], tools: [weatherTool] }, 'gemini-2.5-flash');
    const message = (completion.choices[0] as Json).message;
    const signature = message.tool_calls[0].extra_content.google.thought_signature;
    expect(signature).toEqual(expect.any(String));
    await complete(
      { messages: [question, message, { role: 'tool', tool_call_id: 'call_0', content: 'sunny' }] },
      'gemini-2.5-flash',
    );
    expect(sim.requests.at(-1)?.body).toMatchObject({
      contents: [
        { role: 'user' },
        { role: 'model', parts: [{ thoughtSignature: signature }] },
        { role: 'user' },
      ],
    });
  });

  it('answers JSON in JSON mode', async () => {
    const { completion } = await complete({
      messages: [user('hi')],
      response_format: { type: 'json_object' },
    });
    expect(JSON.parse((completion.choices[0] as Json).message.content)).toEqual({ echo: 'hi' });
    expect(sim.requests.at(-1)?.body).toMatchObject({
      generationConfig: { responseMimeType: 'application/json' },
    });
  });

  it('reports cached prompt tokens, plain and streamed', async () => {
    const body = { messages: [{ role: 'system', content: 'You are cached context.' }, user('hi')] };
    const { completion, usage: reported } = await complete(body);
    expect(reported).toEqual(usage(11, 2, { cachedPromptTokens: 7 }));
    expect(completion.usage).toMatchObject({
      prompt_tokens: 11,
      prompt_tokens_details: { cached_tokens: 7 },
    });
    const items = await stream(body);
    expect(items.at(-1)?.usage).toEqual(usage(11, 2, { cachedPromptTokens: 7 }));
  });

  it('finishes with length at max_tokens, plain and streamed', async () => {
    const body = { messages: [user('one two three')], max_tokens: 2 };
    const { completion, usage: reported } = await complete(body);
    expect(completion.choices[0]).toMatchObject({
      message: { content: 'echo: one' },
      finish_reason: 'length',
    });
    expect(reported).toEqual(usage(6, 2));
    expect(sim.requests.at(-1)?.body).toMatchObject({ generationConfig: { maxOutputTokens: 2 } });
    const items = await stream(body);
    expect(joined(items, 'content')).toBe('echo: one');
    expect(finishes(items)).toEqual(['length']);
  });

  it('reports no usage when Google sends no usageMetadata, and maps safety stops to content_filter', async () => {
    sim.script({
      kind: 'error',
      status: 200,
      body: {
        candidates: [{ content: { role: 'model', parts: [{ text: 'partial' }] }, finishReason: 'SAFETY' }],
      },
    });
    const { completion, usage: reported } = await complete({ messages: [user('hi')] });
    expect(reported).toBeUndefined();
    expect(completion.usage).toBeUndefined();
    expect(completion.choices[0]).toMatchObject({
      message: { content: 'partial' },
      finish_reason: 'content_filter',
    });

    sim.script({
      kind: 'error',
      status: 200,
      body: { promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 4 } },
    });
    const blocked = await complete({ messages: [user('hi')] });
    expect(blocked.completion.choices[0]).toMatchObject({
      message: { content: '' },
      finish_reason: 'content_filter',
    });
    // Google leaves zero counts out: a final usageMetadata without candidatesTokenCount means none were produced.
    expect(blocked.usage).toEqual(usage(4, 0));
  });

  it('maps a 500 to a server failure with Google’s message', async () => {
    sim.script({ kind: 'error', status: 500 });
    const failure = complete({ messages: [user('hi')] });
    await expect(failure).rejects.toBeInstanceOf(UpstreamError);
    await expect(failure).rejects.toMatchObject({
      failure: 'server',
      status: 500,
      message: expect.stringContaining('An internal error has occurred'),
    });
  });

  it('maps a 503 when a stream opens to a retryable server failure', async () => {
    sim.script({ kind: 'error', status: 503 });
    await expect(stream({ messages: [user('hi')] })).rejects.toMatchObject({
      failure: 'server',
      status: 503,
      retryable: true,
    });
  });

  it('maps a 429 to rate_limited', async () => {
    sim.script({ kind: 'rate_limited', retryAfterSeconds: 7 });
    await expect(complete({ messages: [user('hi')] })).rejects.toMatchObject({
      failure: 'rate_limited',
      status: 429,
      message: expect.stringContaining('You exceeded your current quota'),
    });
  });

  it('carries the RetryInfo delay of a 429 as retryAfterMs', async () => {
    sim.script({ kind: 'rate_limited', retryAfterSeconds: 7 });
    await expect(complete({ messages: [user('hi')] })).rejects.toMatchObject({
      failure: 'rate_limited',
      retryAfterMs: 7000,
    });
  });

  it('maps a refused request to a client failure with Google’s message', async () => {
    const refused = geminiChat.complete({
      body: { messages: [user('hi')] },
      upstream: { ...upstream(), apiKey: '' },
      signal: new AbortController().signal,
    });
    await expect(refused).rejects.toMatchObject({
      failure: 'client',
      status: 400,
      message: 'API key not valid. Please pass a valid API key.',
    });
  });

  it('times out when Google does not answer within timeoutMs', async () => {
    sim.script({ kind: 'hang' });
    const started = Date.now();
    await expect(complete({ messages: [user('hi')] }, undefined, 200)).rejects.toMatchObject({
      failure: 'timeout',
    });
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('fails, rather than ending quietly, when the stream is cut', async () => {
    sim.script({ kind: 'disconnect_mid_stream', afterChunks: 2 });
    await expect(stream({ messages: [user('one two three four')] })).rejects.toThrow();
  });
});
