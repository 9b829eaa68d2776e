import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../commands/errors.ts';
import type { ChatChunk, ReportedUsage } from '../../src/contracts/chat.ts';
import { RequestRefused } from '../../src/contracts/errors.ts';
import { describeAnthropicError } from '../../src/http/anthropic-errors.ts';
import { reasoningEffort, toChatMessages, toChatRequest } from '../../src/messages/request.ts';
import { messageIdFor, stopReason, toMessageResponse, toolInput } from '../../src/messages/response.ts';
import { MessagesRequest } from '../../src/messages/schema.ts';
import { type MessageEvent, MessageEvents, sseEvent } from '../../src/messages/stream.ts';

const usage = (promptTokens: number, completionTokens: number, cachedPromptTokens = 0): ReportedUsage => ({
  promptTokens,
  completionTokens,
  cachedPromptTokens,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
});

describe('Messages request → chat-completions request', () => {
  it('translates every field of a full conversation', () => {
    const body = MessagesRequest.parse({
      model: 'openai/gpt-4o',
      max_tokens: 512,
      system: [
        { type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'Answer in French.' },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture, and the weather?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'The user wants two things.', signature: 'sig' },
            { type: 'text', text: 'A cat. Checking the weather.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'Sunny, 21 °C' },
            {
              type: 'tool_result',
              tool_use_id: 'toolu_2',
              is_error: true,
              content: [
                { type: 'text', text: 'clock unavailable' },
                { type: 'image', source: { type: 'url', url: 'https://example.com/clock.png' } },
              ],
            },
            { type: 'text', text: 'Thanks!' },
          ],
        },
      ],
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      stop_sequences: ['END'],
      stream: true,
      metadata: { user_id: 'u-1' },
      tools: [
        {
          name: 'get_weather',
          description: 'Weather of a city',
          input_schema: { type: 'object', properties: { city: { type: 'string' } } },
        },
        { name: 'get_time', input_schema: { type: 'object' } },
      ],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      thinking: { type: 'enabled', budget_tokens: 2000 },
    });

    expect(toChatRequest(body)).toEqual({
      model: 'openai/gpt-4o',
      max_tokens: 512,
      stream: true,
      temperature: 0.2,
      top_p: 0.9,
      stop: ['END'],
      reasoning_effort: 'medium',
      messages: [
        { role: 'system', content: 'You are terse.\nAnswer in French.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture, and the weather?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
          ],
        },
        {
          role: 'assistant',
          content: 'A cat. Checking the weather.',
          tool_calls: [
            {
              id: 'toolu_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
            { id: 'toolu_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: 'Sunny, 21 °C' },
        { role: 'tool', tool_call_id: 'toolu_2', content: 'Error: clock unavailable' },
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'https://example.com/clock.png' } },
            { type: 'text', text: 'Thanks!' },
          ],
        },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Weather of a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } } },
          },
        },
        { type: 'function', function: { name: 'get_time', parameters: { type: 'object' } } },
      ],
      tool_choice: 'required',
      parallel_tool_calls: false,
    });
  });

  it('keeps a plain conversation plain, and sends only what was asked', () => {
    const body = MessagesRequest.parse({
      model: 'local/echo',
      max_tokens: 16,
      system: 'Be brief.',
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: { a: 1 } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't' }] },
      ],
    });
    expect(toChatRequest(body)).toEqual({
      model: 'local/echo',
      max_tokens: 16,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
        },
        { role: 'tool', tool_call_id: 't', content: '' },
      ],
    });
  });

  it('maps each tool choice, and drops one that comes without tools', () => {
    const choose = (tool_choice: unknown) =>
      toChatRequest(
        MessagesRequest.parse({
          model: 'm',
          max_tokens: 1,
          messages: [{ role: 'user', content: 'x' }],
          tools: [{ name: 'f', input_schema: { type: 'object' } }],
          tool_choice,
        }),
      ).tool_choice;
    expect(choose({ type: 'auto' })).toBe('auto');
    expect(choose({ type: 'any' })).toBe('required');
    expect(choose({ type: 'none' })).toBe('none');
    expect(choose({ type: 'tool', name: 'f' })).toEqual({ type: 'function', function: { name: 'f' } });
    const bare = MessagesRequest.parse({
      model: 'm',
      max_tokens: 1,
      messages: [{ role: 'user', content: 'x' }],
      tool_choice: { type: 'auto' },
    });
    expect(toChatRequest(bare)).not.toHaveProperty('tool_choice');
  });

  it('buckets a thinking budget into the smallest effort that allows it', () => {
    const effort = (budget_tokens: number) => reasoningEffort({ type: 'enabled', budget_tokens });
    expect([1024, 1025, 4096, 10_000, 16_384, 32_768, 32_769, 100_000].map(effort)).toEqual([
      'low',
      'medium',
      'medium',
      'high',
      'high',
      'xhigh',
      'max',
      'max',
    ]);
    expect(reasoningEffort({ type: 'adaptive' })).toBe('medium');
    expect(reasoningEffort({ type: 'disabled' })).toBeUndefined();
    expect(reasoningEffort(undefined)).toBeUndefined();
  });

  it('counts system messages inside the conversation and skips an empty system prompt', () => {
    expect(
      toChatMessages('', [
        { role: 'system', content: [{ type: 'text', text: 'Rules' }] },
        { role: 'user', content: 'x' },
      ]),
    ).toEqual([
      { role: 'system', content: 'Rules' },
      { role: 'user', content: 'x' },
    ]);
  });

  it('refuses what the Messages API refuses, naming the field', () => {
    const issues = (input: unknown) =>
      MessagesRequest.safeParse(input).error?.issues.map((issue) => issue.path.join('.'));
    expect(issues({ model: 'm', messages: [{ role: 'user', content: 'x' }] })).toEqual(['max_tokens']);
    expect(issues({ model: 'm', max_tokens: 5 })).toEqual(['messages']);
    expect(
      issues({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }], temperature: 1.5 }),
    ).toEqual(['temperature']);
    expect(
      issues({
        model: 'm',
        max_tokens: 5,
        messages: [{ role: 'user', content: 'x' }],
        tools: [{ type: 'web_search_20250305', name: 'web_search' }],
      }),
    ).toEqual(['tools.0.type', 'tools.0.input_schema']);
  });
});

describe('chat.completion → Messages response', () => {
  it('translates reasoning, text, tool calls, the stop reason and usage', () => {
    const completion = {
      id: 'chatcmpl-abc',
      object: 'chat.completion',
      model: 'openai/o3',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Let me check.',
            reasoning_content: 'Need the weather tool.',
            tool_calls: [
              {
                id: 'call_1',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
              },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
    };
    expect(
      toMessageResponse(completion, { id: 'msg_1', model: 'openai/o3', usage: usage(120, 30, 100) }),
    ).toEqual({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'openai/o3',
      content: [
        { type: 'thinking', thinking: 'Need the weather tool.', signature: '' },
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: {
        input_tokens: 20,
        output_tokens: 30,
        cache_read_input_tokens: 100,
        cache_creation_input_tokens: 0,
      },
    });
  });

  it('gives an empty answer no blocks and maps every finish reason', () => {
    const empty = { choices: [{ message: { role: 'assistant', content: null }, finish_reason: 'length' }] };
    const message = toMessageResponse(empty, { id: 'msg_2', model: 'local/echo', usage: usage(5, 0) });
    expect(message.content).toEqual([]);
    expect(message.stop_reason).toBe('max_tokens');
    expect(['stop', 'length', 'tool_calls', 'content_filter', null, 'unheard_of'].map(stopReason)).toEqual([
      'end_turn',
      'max_tokens',
      'tool_use',
      'refusal',
      'end_turn',
      'end_turn',
    ]);
  });

  it('keeps tool arguments that are not a JSON object instead of losing them', () => {
    expect(toolInput('{"a":[1]}')).toEqual({ a: [1] });
    expect(toolInput('')).toEqual({});
    expect(toolInput('[1,2]')).toEqual({ arguments: '[1,2]' });
    expect(toolInput('{"a":')).toEqual({ arguments: '{"a":' });
  });

  it('keeps Anthropic’s own message id and makes one up otherwise', () => {
    expect(messageIdFor('chatcmpl-msg_01XyZ')).toBe('msg_01XyZ');
    expect(messageIdFor('chatcmpl-local')).toMatch(/^msg_[0-9a-f]{24}$/);
    expect(messageIdFor(undefined)).toMatch(/^msg_[0-9a-f]{24}$/);
  });
});

const chunk = (delta: Record<string, unknown>, finish: string | null = null): ChatChunk => ({
  id: 'chatcmpl-x',
  object: 'chat.completion.chunk',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

/** A reasoning model that thinks, says a word, then calls two tools, the first in fragments. */
const CHUNKS: ChatChunk[] = [
  chunk({ role: 'assistant', content: '' }),
  chunk({ reasoning_content: 'Think' }),
  chunk({ reasoning_content: 'ing.' }),
  chunk({ content: 'Sure' }),
  chunk({ content: '.' }),
  chunk({
    tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } }],
  }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x":' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
  chunk({
    tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '{}' } }],
  }),
  chunk({}, 'tool_calls'),
  { id: 'chatcmpl-x', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 50 } },
];

function translate(
  chunks: ChatChunk[],
  billed: ReportedUsage,
): { translator: MessageEvents; events: MessageEvent[] } {
  const translator = new MessageEvents({ id: 'msg_s', model: 'openai/o3', inputTokens: 48 });
  const events = [
    ...translator.start(),
    ...chunks.flatMap((c) => translator.push(c)),
    ...translator.end(billed),
  ];
  return { translator, events };
}

describe('chat-completion chunks → Messages events', () => {
  it('emits the documented sequence, one block per kind and per tool call', () => {
    const { translator, events } = translate(CHUNKS, usage(50, 12, 10));
    expect(translator.produced).toBe('Sure.');
    expect(events).toEqual([
      {
        type: 'message_start',
        message: {
          id: 'msg_s',
          type: 'message',
          role: 'assistant',
          model: 'openai/o3',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {
            input_tokens: 48,
            output_tokens: 0,
            cache_read_input_tokens: 0,
            cache_creation_input_tokens: 0,
          },
        },
      },
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Think' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'ing.' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Sure' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: '.' } },
      { type: 'content_block_stop', index: 1 },
      {
        type: 'content_block_start',
        index: 2,
        content_block: { type: 'tool_use', id: 'call_a', name: 'f', input: {} },
      },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"x":' } },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '1}' } },
      { type: 'content_block_stop', index: 2 },
      {
        type: 'content_block_start',
        index: 3,
        content_block: { type: 'tool_use', id: 'call_b', name: 'g', input: {} },
      },
      { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{}' } },
      { type: 'content_block_stop', index: 3 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: {
          input_tokens: 40,
          output_tokens: 12,
          cache_read_input_tokens: 10,
          cache_creation_input_tokens: 0,
        },
      },
      { type: 'message_stop' },
    ]);
  });

  it('frames each event as Anthropic does', () => {
    expect(sseEvent({ type: 'message_stop' })).toBe('event: message_stop\ndata: {"type":"message_stop"}\n\n');
  });

  it('rebuilds, through the official SDK’s accumulator, the message the JSON path returns', async () => {
    const { events } = translate(CHUNKS, usage(50, 12, 10));
    const lines = new TextEncoder().encode(events.map((event) => `${JSON.stringify(event)}\n`).join(''));
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(lines);
        controller.close();
      },
    });
    const streamed = await MessageStream.fromReadableStream(body).finalMessage();
    const completion = {
      choices: [
        {
          message: {
            role: 'assistant',
            content: 'Sure.',
            reasoning_content: 'Thinking.',
            tool_calls: [
              { id: 'call_a', type: 'function', function: { name: 'f', arguments: '{"x":1}' } },
              { id: 'call_b', type: 'function', function: { name: 'g', arguments: '{}' } },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
    };
    const json = toMessageResponse(completion, { id: 'msg_s', model: 'openai/o3', usage: usage(50, 12, 10) });
    expect(streamed).toMatchObject(json);
  });
});

describe('errors in Anthropic’s shape', () => {
  it('keeps the gateway’s status, message and headers, with Anthropic’s type names or the spec’s own', () => {
    const cases: [Error, number, string][] = [
      [new RequestRefused('invalid', 'bad'), 400, 'invalid_request_error'],
      [new RequestRefused('unauthenticated', 'who?'), 401, 'authentication_error'],
      [new RequestRefused('insufficient_balance', 'top up'), 402, 'billing_error'],
      [new RequestRefused('forbidden', 'no'), 403, 'permission_error'],
      [new RequestRefused('model_not_found', 'nope'), 404, 'model_not_found'],
      [new RequestRefused('not_found', 'no such batch'), 404, 'not_found_error'],
      [new RequestRefused('budget_exceeded', 'cap reached'), 402, 'budget_exceeded'],
      [new DomainError('conflict', 'again'), 409, 'conflict_error'],
      [new RequestRefused('upstream_failed', 'upstream down'), 502, 'provider_error'],
      [new RequestRefused('upstream_timeout', 'slow'), 504, 'timeout_error'],
    ];
    for (const [error, status, type] of cases) {
      const described = describeAnthropicError(error, 'req-1');
      expect(described.status).toBe(status);
      expect(described.body).toEqual({
        type: 'error',
        error: { type, message: error.message, code: status },
        request_id: 'req-1',
      });
    }
    const limited = describeAnthropicError(
      new RequestRefused('rate_limited', 'slow down', { 'retry-after': '3' }),
    );
    expect(limited).toEqual({
      status: 429,
      headers: { 'retry-after': '3' },
      body: { type: 'error', error: { type: 'rate_limit_error', message: 'slow down', code: 429 } },
    });
    expect(describeAnthropicError(new Error('boom')).body.error).toEqual({
      type: 'api_error',
      message: 'The gateway failed to process the request',
      code: 500,
    });
  });
});
