import { describe, expect, it } from 'vitest';
import type { Upstream } from '../../src/contracts/chat.ts';
import { toAnthropicRequest } from '../../src/providers/anthropic/request.ts';
import { fromAnthropicMessage } from '../../src/providers/anthropic/response.ts';
import { toOpenAiRequest } from '../../src/providers/openai/request.ts';
import { readOpenAiUsage } from '../../src/providers/openai/usage.ts';

const upstream = (quirks: Partial<Upstream['quirks']> = {}, model = 'm'): Upstream => ({
  model,
  baseUrl: 'http://x',
  apiKey: 'k',
  timeoutMs: 1000,
  quirks: { noSampling: false, maxTokensField: 'max_tokens', reasoning: false, ...quirks },
});

const conversation = {
  messages: [
    { role: 'system', content: 'Be brief.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
      ],
    },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'look', arguments: '{"q":"cat"}' } }],
    },
    { role: 'tool', tool_call_id: 'call_1', content: 'a cat' },
  ],
  tools: [
    { type: 'function', function: { name: 'look', description: 'Look', parameters: { type: 'object' } } },
  ],
  tool_choice: 'required',
  max_tokens: 100,
  temperature: 0.5,
  reasoning_effort: 'high',
  cache: 'skip',
  models: ['x/y'],
};

describe('OpenAI-compatible request mapping', () => {
  it('keeps the format, drops gateway fields, and always asks for streamed usage', () => {
    expect(toOpenAiRequest(conversation, upstream(), true)).toEqual({
      model: 'm',
      messages: conversation.messages,
      tools: conversation.tools,
      tool_choice: 'required',
      max_tokens: 100,
      temperature: 0.5,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('follows a reasoning model’s quirks', () => {
    const out = toOpenAiRequest(
      conversation,
      upstream({ noSampling: true, maxTokensField: 'max_completion_tokens', reasoning: true }),
      false,
    );
    expect(out).toMatchObject({ max_completion_tokens: 100, reasoning_effort: 'high' });
    expect(out).not.toHaveProperty('max_tokens');
    expect(out).not.toHaveProperty('temperature');
    expect(out).not.toHaveProperty('stream');
  });

  it('reads cached and reasoning tokens, and no usage as none (never zero)', () => {
    expect(
      readOpenAiUsage({
        prompt_tokens: 10,
        completion_tokens: 5,
        prompt_tokens_details: { cached_tokens: 4 },
        completion_tokens_details: { reasoning_tokens: 2 },
      }),
    ).toEqual({
      promptTokens: 10,
      completionTokens: 5,
      cachedPromptTokens: 4,
      cacheWriteTokens: 0,
      reasoningTokens: 2,
    });
    expect(readOpenAiUsage(undefined)).toBeUndefined();
    expect(readOpenAiUsage({ prompt_tokens: 3 })).toBeUndefined();
  });
});

describe('Anthropic translation', () => {
  it('moves system prompts, images, tool calls and tool results into the Messages format', () => {
    expect(toAnthropicRequest(conversation, upstream({}, 'claude'), false)).toEqual({
      model: 'claude',
      system: 'Be brief.',
      max_tokens: 100,
      temperature: 0.5,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
          ],
        },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'call_1', name: 'look', input: { q: 'cat' } }],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'a cat' }] },
      ],
      tools: [{ name: 'look', description: 'Look', input_schema: { type: 'object' } }],
      tool_choice: { type: 'any' },
    });
  });

  it('turns reasoning_effort into a thinking budget below max_tokens, without sampling', () => {
    const out = toAnthropicRequest(
      { ...conversation, max_tokens: 5000 },
      upstream({ reasoning: true }, 'claude'),
      true,
    );
    expect(out.thinking).toEqual({ type: 'enabled', budget_tokens: 4999 });
    expect(out).not.toHaveProperty('temperature');
    expect(out.stream).toBe(true);
  });

  it('reads a Messages response back, counting cache reads and writes inside prompt tokens', () => {
    const { completion, usage } = fromAnthropicMessage({
      id: 'msg_1',
      model: 'claude',
      stop_reason: 'tool_use',
      content: [
        { type: 'thinking', thinking: 'hmm' },
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: 'toolu_1', name: 'look', input: { q: 'dog' } },
      ],
      usage: {
        input_tokens: 10,
        output_tokens: 7,
        cache_read_input_tokens: 5,
        cache_creation_input_tokens: 2,
      },
    });
    expect(completion.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: {
        content: 'Let me look.',
        reasoning_content: 'hmm',
        tool_calls: [
          { id: 'toolu_1', type: 'function', function: { name: 'look', arguments: '{"q":"dog"}' } },
        ],
      },
    });
    expect(usage).toEqual({
      promptTokens: 17,
      completionTokens: 7,
      cachedPromptTokens: 5,
      cacheWriteTokens: 2,
      reasoningTokens: 0,
    });
  });
});
