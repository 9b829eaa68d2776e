import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

let gateway: TestGateway;
let client: OpenAI;
let key: string;

beforeAll(async () => {
  gateway = await startTestGateway();
  const account = await json(await gateway.admin('/accounts', { name: 'sdk' }));
  key = account.key;
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 500, reference: 'p' });
  client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.close();
});

const balanceNanos = async () =>
  json(await fetch(`${gateway.url}/v1/balance`, { headers: { authorization: `Bearer ${key}` } }));

describe('chat completions through the official openai SDK', () => {
  it('answers, reports usage, and charges what the X-Cost-Cents header says', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'local/echo', messages: [{ role: 'user', content: 'Bonjour, passerelle' }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe('Bonjour, passerelle');
    expect(data.choices[0]?.finish_reason).toBe('stop');
    expect(data.usage?.completion_tokens).toBeGreaterThan(0);
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
      (u) => u.data.length === 1,
    );
    expect(usage.data[0].cost_cents).toBeCloseTo(cost, 7);
  });

  it('streams chunks with usage and cost in the final chunk, and bills the stream', async () => {
    const stream = await client.chat.completions.create({
      model: 'local/echo',
      messages: [{ role: 'user', content: 'one two three four five' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: (OpenAI.CompletionUsage & { cost_cents?: number }) | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('one two three four five');
    expect(usage?.completion_tokens).toBe(5);
    expect(usage?.cost_cents).toBeGreaterThan(0);
  });

  it('honours max_tokens and reports a cut reply as finish_reason length', async () => {
    const data = await client.chat.completions.create({
      model: 'local/echo',
      max_tokens: 2,
      messages: [{ role: 'user', content: 'alpha beta gamma delta epsilon' }],
    });
    expect(data.choices[0]?.finish_reason).toBe('length');
    expect(data.usage?.completion_tokens).toBe(2);
  });

  it('refuses a request without max_tokens that the balance cannot cover, saying what it can afford', async () => {
    const account = await json(await gateway.admin('/accounts', { name: 'poor' }));
    await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 1, reference: 'p' });
    const poor = new OpenAI({ apiKey: account.key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    const body = { model: 'local/echo-pro', messages: [{ role: 'user' as const, content: 'short' }] };
    // 8 input and 8,192 output tokens on local/echo-pro: 24,000 + 122,880,000, fee 6,145,200 = $0.1290492. The
    // cent pays for 633 output tokens (24,000 + 9,495,000 + fee 475,950 = 9,994,950); 634 would cost 10,010,700.
    await expect(poor.chat.completions.create(body)).rejects.toMatchObject({
      status: 402,
      error: {
        type: 'insufficient_balance',
        message:
          'Insufficient balance: $0.01 available, this request needs up to $0.129049. Top up to continue. ' +
          'You requested up to 8192 output tokens, but can only afford 633: ask for 633 or fewer, or send the ' +
          'header x-gw-fit-output: true to have the output limit lowered to what is affordable.',
      },
    });
    // Asked for, the limit is lowered to what the balance pays for; this answer fits in it.
    const data = await poor.chat.completions.create(body, { headers: { 'x-gw-fit-output': 'true' } });
    expect(data.choices[0]?.message.content).toBe('short');
  });

  it('maps errors to the SDK’s error classes', async () => {
    await expect(
      client.chat.completions.create({ model: 'nope/model', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({ status: 404, error: { type: 'model_not_found' } });
    await expect(client.chat.completions.create({ model: 'local/echo', messages: [] })).rejects.toMatchObject(
      { status: 400, error: { type: 'invalid_request_error' } },
    );
    const bad = new OpenAI({ apiKey: 'sk-gw-wrong', baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    await expect(bad.chat.completions.create({ model: 'local/echo', messages: [] })).rejects.toBeInstanceOf(
      OpenAI.AuthenticationError,
    );
    expect((await balanceNanos()).cents).toBeGreaterThan(0);
  });

  it.each([
    ['a user message without content', { messages: [{ role: 'user' }] }, 'messages.0.content'],
    [
      'a system message with null content',
      {
        messages: [
          { role: 'system', content: null },
          { role: 'user', content: 'x' },
        ],
      },
      'messages.0.content',
    ],
    ['a response_format of no known type', { response_format: { type: 'bogus' } }, 'response_format.type'],
    ['models that is not a list', { models: 'local/echo' }, 'models'],
    [
      'a tool_choice naming a function not in tools',
      {
        tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
        tool_choice: { type: 'function', function: { name: 'other' } },
      },
      'tool_choice',
    ],
  ])('refuses %s with a 400 naming the field, as OpenAI does', async (_, fields, field) => {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'x' }], ...fields }),
    });
    expect(response.status).toBe(400);
    const { error } = await json(response);
    expect(error.type).toBe('invalid_request_error');
    expect(error.message).toContain(field);
  });

  it('still takes an assistant message with tool calls and no content, and a tool_choice in tools', async () => {
    const answer = await client.chat.completions.create({
      model: 'local/echo',
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
      tool_choice: { type: 'function', function: { name: 'lookup' } },
      messages: [
        { role: 'user', content: 'find it' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'found' },
      ],
    });
    expect(answer.choices[0]?.message).toBeDefined();
  });
});
