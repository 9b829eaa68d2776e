import { describe, expect, it } from 'vitest';
import type { ChatChunk } from '../../src/contracts/chat.ts';
import { RequestRefused } from '../../src/contracts/errors.ts';
import { Assembled } from '../../src/pipeline/assembled.ts';
import { toChatRequest } from '../../src/responses/request.ts';
import { outputItems, turnOf } from '../../src/responses/response.ts';
import { ResponsesRequest } from '../../src/responses/schema.ts';
import { ResponseEvents } from '../../src/responses/stream.ts';

const parse = (body: unknown) => ResponsesRequest.parse(body);
const usage = {
  promptTokens: 10,
  completionTokens: 7,
  cachedPromptTokens: 2,
  cacheWriteTokens: 4,
  reasoningTokens: 3,
};

function refusal(body: unknown): string {
  try {
    toChatRequest(parse(body), []);
  } catch (error) {
    if (error instanceof RequestRefused && error.kind === 'invalid') return error.message;
    throw error;
  }
  throw new Error('not refused');
}

describe('a Responses request as a chat request', () => {
  it('puts the instructions, the earlier turns and the input in order, a string input as one user message', () => {
    const chat = toChatRequest(
      parse({ model: 'm', instructions: 'Be brief', input: 'now', max_output_tokens: 50, temperature: 0.2 }),
      [
        { role: 'user', content: 'before' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'answer' }] },
      ],
    );
    expect(chat).toEqual({
      model: 'm',
      stream: false,
      max_tokens: 50,
      temperature: 0.2,
      messages: [
        { role: 'system', content: 'Be brief' },
        { role: 'user', content: 'before' },
        { role: 'assistant', content: 'answer' },
        { role: 'user', content: 'now' },
      ],
    });
  });

  it('joins calls to the assistant message before them, and gives outputs as tool messages (images after)', () => {
    const chat = toChatRequest(
      parse({
        input: [
          { role: 'developer', content: 'rules' },
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'look' },
              { type: 'input_image', image_url: 'https://x/i.png', detail: 'low' },
            ],
          },
          { type: 'reasoning', id: 'rs_1', summary: [] },
          { role: 'assistant', content: 'calling' },
          { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
          { type: 'function_call', call_id: 'c2', name: 'g', arguments: '{"a":1}' },
          { type: 'function_call_output', call_id: 'c1', output: 'one' },
          {
            type: 'function_call_output',
            call_id: 'c2',
            output: [
              { type: 'input_text', text: 'two' },
              { type: 'input_image', image_url: 'data:image/png;base64,AA' },
            ],
          },
        ],
      }),
      [],
    );
    expect(chat.messages).toEqual([
      { role: 'system', content: 'rules' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'https://x/i.png', detail: 'low' } },
        ],
      },
      {
        role: 'assistant',
        content: 'calling',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } },
          { id: 'c2', type: 'function', function: { name: 'g', arguments: '{"a":1}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'one' },
      { role: 'tool', tool_call_id: 'c2', content: 'two' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AA' } }] },
    ]);
  });

  it('carries tools, the tool choice, the JSON schema and the reasoning effort', () => {
    const chat = toChatRequest(
      parse({
        input: 'x',
        tools: [{ type: 'function', name: 'f', parameters: { type: 'object' }, strict: true }],
        tool_choice: { type: 'function', name: 'f' },
        parallel_tool_calls: false,
        text: { format: { type: 'json_schema', name: 's', schema: { type: 'object' }, strict: true } },
        reasoning: { effort: 'minimal' },
        stream: true,
      }),
      [],
    );
    expect(chat).toMatchObject({
      stream: true,
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' }, strict: true } }],
      tool_choice: { type: 'function', function: { name: 'f' } },
      parallel_tool_calls: false,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 's', schema: { type: 'object' }, strict: true },
      },
      reasoning_effort: 'low',
    });
  });

  it('refuses what it cannot carry, naming the field', () => {
    expect(refusal({ input: 'x', tools: [{ type: 'web_search' }] })).toMatch(
      /^'tools\[0\]\.type': 'web_search'/,
    );
    expect(
      refusal({ input: 'x', tools: [{ type: 'function', name: 'f' }], tool_choice: { type: 'file_search' } }),
    ).toMatch(/^'tool_choice\.type'/);
    expect(refusal({ input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] })).toMatch(
      /^'input\[0\]\.content\[0\]\.type': 'input_file'/,
    );
    expect(refusal({ input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'f' }] }] })).toMatch(
      /^'input\[0\]\.content\[0\]\.image_url'/,
    );
    expect(refusal({ input: [{ type: 'item_reference', id: 'x' }] })).toMatch(/^'input\[0\]\.type'/);
    expect(refusal({ input: 'x', background: true })).toMatch(/^'background'/);
    expect(refusal({ input: [] })).toMatch(/^'input'/);
    expect(refusal({ input: 'x', tool_choice: 'required' })).toMatch(/^'tool_choice'/);
  });
});

const chunk = (delta: Record<string, unknown>, finish: string | null = null): ChatChunk => ({
  id: 'c',
  model: 'm',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

describe('chat chunks as Responses events', () => {
  const chunks = [
    chunk({ reasoning_content: 'thinking ' }),
    chunk({ reasoning_content: 'hard' }),
    chunk({ content: 'Hello' }),
    chunk({ content: ' there' }),
    chunk({ tool_calls: [{ index: 0, id: 'call_a', function: { name: 'f', arguments: '{"x"' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }),
    chunk(
      { tool_calls: [{ index: 1, id: 'call_b', function: { name: 'g', arguments: '{}' } }] },
      'tool_calls',
    ),
  ];
  const meta = { id: 'resp_0123456789abcdef0123456789abcdef', createdAt: 1_700_000_000, model: 'm' };

  function run(body = parse({ input: 'x' })) {
    const events = new ResponseEvents(body, meta);
    const out = [...events.start(), ...chunks.flatMap((c) => events.push(c)), ...events.end(usage)];
    return out;
  }

  it('opens and closes each item in order, numbering every event', () => {
    const events = run();
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.reasoning_text.delta',
      'response.reasoning_text.delta',
      'response.reasoning_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const done = events.find(
      (e) => e.type === 'response.function_call_arguments.done' && e.output_index === 2,
    );
    expect(done).toMatchObject({
      name: 'f',
      arguments: '{"x":1}',
      item_id: 'fc_0123456789abcdef0123456789abcdef_2',
    });
  });

  it('ends with the response a read-back rebuilds from the request log’s assembled stream', () => {
    const completed = run().at(-1) as unknown as {
      response: { output: unknown[]; usage: unknown; status: string };
    };
    const assembled = new Assembled();
    for (const c of chunks) assembled.add({ chunk: c });
    expect(completed.response.output).toEqual(outputItems(turnOf(assembled.completion()), meta.id));
    expect(completed.response.status).toBe('completed');
    expect(completed.response.usage).toEqual({
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 2, cache_write_tokens: 4 },
      output_tokens: 7,
      output_tokens_details: { reasoning_tokens: 3 },
      total_tokens: 17,
    });
  });

  it('ends a stream cut by the output limit with response.incomplete', () => {
    const events = new ResponseEvents(parse({ input: 'x' }), meta);
    const out = [
      ...events.start(),
      ...events.push(chunk({ content: 'cut' }, 'length')),
      ...events.end(usage),
    ];
    expect(out.at(-1)).toMatchObject({
      type: 'response.incomplete',
      response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } },
    });
    expect(out.find((e) => e.type === 'response.output_item.done')).toMatchObject({
      item: { status: 'incomplete' },
    });
  });

  it('reads a logged plain completion as the same turn', () => {
    const logged = {
      completion: {
        choices: [
          {
            message: {
              content: 'Hi',
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
            },
            finish_reason: 'tool_calls',
          },
        ],
      },
      usage: null,
    };
    expect(turnOf(logged)).toEqual({
      reasoning: '',
      text: 'Hi',
      refusal: '',
      toolCalls: [{ id: 'call_1', name: 'f', arguments: '{}' }],
      finish: 'tool_calls',
    });
  });
});
