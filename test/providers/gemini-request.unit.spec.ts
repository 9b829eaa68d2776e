import { describe, expect, it } from 'vitest';
import type { ChatBody, Upstream } from '../../src/contracts/chat.ts';
import { toGeminiRequest } from '../../src/providers/gemini/request.ts';

const upstream = (model = 'gemini-2.5-flash', quirks: Partial<Upstream['quirks']> = {}): Upstream => ({
  model,
  baseUrl: 'https://generativelanguage.googleapis.com',
  apiKey: 'AIza-test',
  timeoutMs: 1000,
  quirks: { noSampling: false, maxTokensField: 'max_tokens', reasoning: true, ...quirks },
});

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather in a city',
    strict: true,
    parameters: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      additionalProperties: false,
      properties: {
        city: { type: 'string', description: 'City name' },
        unit: { type: ['string', 'null'], enum: ['c', 'f', null] },
        where: { $ref: '#/$defs/Place' },
      },
      required: ['city'],
      $defs: {
        Place: { type: 'object', additionalProperties: false, properties: { lat: { type: 'number' } } },
      },
    },
  },
};

describe('chat-completions request → Gemini GenerateContentRequest', () => {
  it('translates a full conversation with system, images, a tool round trip, tools, JSON schema and reasoning', () => {
    const body: ChatBody = {
      model: 'google/gemini-2.5-flash',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in English.' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in these pictures, and the weather?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.webp?size=large' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_0',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
              extra_content: { google: { thought_signature: 'c2ln' } },
            },
            { id: 'call_1', type: 'function', function: { name: 'get_time', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_0', content: 'sunny' },
        { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: 'noon' }] },
        { role: 'assistant', content: 'Sunny at noon.' },
        { role: 'user', content: 'Thanks' },
        { role: 'user', content: 'As JSON please.' },
      ],
      tools: [
        weatherTool,
        { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
      ],
      tool_choice: 'auto',
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'answer',
          strict: true,
          schema: {
            type: 'object',
            properties: { summary: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } },
            required: ['summary'],
            additionalProperties: false,
          },
        },
      },
      reasoning_effort: 'high',
      max_tokens: 500,
      temperature: 0.2,
      top_p: 0.9,
      stop: 'END',
      stream: true,
      stream_options: { include_usage: true },
    };

    expect(toGeminiRequest(body, upstream())).toEqual({
      systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Answer in English.' }] },
      contents: [
        {
          role: 'user',
          parts: [
            { text: 'What is in these pictures, and the weather?' },
            { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
            { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/cat.webp?size=large' } },
          ],
        },
        {
          role: 'model',
          parts: [
            { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2ln' },
            { functionCall: { name: 'get_time', args: {} } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'get_weather', response: { content: 'sunny' } } },
            { functionResponse: { name: 'get_time', response: { content: 'noon' } } },
          ],
        },
        { role: 'model', parts: [{ text: 'Sunny at noon.' }] },
        { role: 'user', parts: [{ text: 'Thanks' }, { text: 'As JSON please.' }] },
      ],
      tools: [
        {
          functionDeclarations: [
            {
              name: 'get_weather',
              description: 'Weather in a city',
              parameters: {
                type: 'object',
                properties: {
                  city: { type: 'string', description: 'City name' },
                  unit: { type: 'string', nullable: true, enum: ['c', 'f'] },
                  where: { type: 'object', properties: { lat: { type: 'number' } } },
                },
                required: ['city'],
              },
            },
            { name: 'get_time' },
          ],
        },
      ],
      toolConfig: { functionCallingConfig: { mode: 'AUTO' } },
      generationConfig: {
        maxOutputTokens: 500,
        temperature: 0.2,
        topP: 0.9,
        stopSequences: ['END'],
        responseMimeType: 'application/json',
        responseSchema: {
          type: 'object',
          properties: { summary: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } },
          required: ['summary'],
        },
        thinkingConfig: { thinkingBudget: 24_576, includeThoughts: true },
      },
    });
  });

  it('maps JSON mode, a forced tool and max_completion_tokens, and drops sampling for noSampling models', () => {
    const body: ChatBody = {
      messages: [{ role: 'user', content: 'hi' }],
      tools: [weatherTool],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      response_format: { type: 'json_object' },
      max_completion_tokens: 64,
      max_tokens: 10,
      temperature: 1,
      top_p: 0.5,
      stop: ['a', 'b'],
    };
    const request = toGeminiRequest(
      body,
      upstream('gemini-2.0-flash', { noSampling: true, reasoning: false }),
    );
    expect(request.toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] },
    });
    expect(request.generationConfig).toEqual({
      maxOutputTokens: 64,
      stopSequences: ['a', 'b'],
      responseMimeType: 'application/json',
    });
  });

  it.each([
    ['required', 'ANY'],
    ['none', 'NONE'],
  ])('maps tool_choice %s to mode %s', (choice, mode) => {
    const request = toGeminiRequest(
      { messages: [{ role: 'user', content: 'hi' }], tools: [weatherTool], tool_choice: choice },
      upstream(),
    );
    expect(request.toolConfig).toEqual({ functionCallingConfig: { mode } });
  });

  it.each([
    ['gemini-2.5-flash', 'none', { thinkingBudget: 0 }],
    ['gemini-2.5-flash', 'low', { thinkingBudget: 1024, includeThoughts: true }],
    ['gemini-2.5-flash', 'medium', { thinkingBudget: 8192, includeThoughts: true }],
    ['gemini-2.5-flash', 'max', { thinkingBudget: 24_576, includeThoughts: true }],
    ['gemini-2.5-pro', 'xhigh', { thinkingBudget: 32_768, includeThoughts: true }],
    ['gemini-2.5-pro', 'none', { thinkingBudget: 128, includeThoughts: true }],
    ['gemini-2.5-pro', undefined, { includeThoughts: true }],
  ])('asks %s with reasoning_effort %s for thinkingConfig %o', (model, effort, thinkingConfig) => {
    const body: ChatBody = { messages: [{ role: 'user', content: 'hi' }], reasoning_effort: effort };
    expect(toGeminiRequest(body, upstream(model)).generationConfig).toEqual({ thinkingConfig });
  });

  it('sends no thinkingConfig to a model that does not think', () => {
    const body: ChatBody = { messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'high' };
    expect(toGeminiRequest(body, upstream('gemini-2.0-flash', { reasoning: false }))).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
    });
  });

  it('refuses a tool result that answers no earlier tool call', () => {
    const body: ChatBody = {
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'tool', tool_call_id: 'call_9', content: 'x' },
      ],
    };
    expect(() => toGeminiRequest(body, upstream())).toThrow(
      expect.objectContaining({ name: 'UpstreamError', failure: 'client' }),
    );
  });
});
