import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { startAnthropicUpstream } from '../upstreams/anthropic.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

let gateway: TestGateway;
let openai: Upstream;
let anthropic: Upstream;
let client: OpenAI;
let key: string;

async function newAccount(name: string, cents: number): Promise<{ id: string; key: string }> {
  const account = await json(await gateway.admin('/accounts', { name }));
  if (cents > 0) await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents, reference: name });
  return { id: account.account_id, key: account.key };
}

const sdk = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${gateway.url}/v1`, maxRetries: 0 });

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startOpenAiUpstream(), startAnthropicUpstream()]);
  gateway = await startTestGateway({
    OPENAI_API_KEY: 'sk-sim-openai',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    ANTHROPIC_API_KEY: 'sk-sim-anthropic',
    ANTHROPIC_BASE_URL: anthropic.url,
  });
  key = (await newAccount('responses', 500)).key;
  client = sdk(key);
});
afterAll(async () => {
  await gateway?.close();
  await Promise.all([openai?.close(), anthropic?.close()]);
});

/** The request log's record of a request, once the projection has it: its exact cost and bodies. */
const logged = (requestId: string | null, apiKey = key) =>
  eventually(
    async () => {
      const response = await fetch(`${gateway.url}/v1/requests/${requestId}`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      return response.status === 200 ? json(response) : undefined;
    },
    (record) => record !== undefined,
    5000,
  );

const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

describe('POST /v1/responses through the official openai SDK', () => {
  it('answers as the equivalent chat completion does, and is charged exactly what it is charged', async () => {
    const { data, response } = await client.responses
      .create(
        { model: 'openai/gpt-4o-mini', instructions: 'Be brief', input: 'Bonjour, passerelle' },
        { headers: { 'x-gw-tag': 'as-response' } },
      )
      .withResponse();
    expect(data).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'openai/gpt-4o-mini',
      instructions: 'Be brief',
      incomplete_details: null,
      error: null,
      output: [
        {
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'echo: Bonjour, passerelle', annotations: [] }],
        },
      ],
    });
    expect(data.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(data.output_text).toBe('echo: Bonjour, passerelle');
    // The simulator's rule: each message is its words + 3 tokens, the instructions one message.
    expect(data.usage).toEqual({
      input_tokens: 2 + 3 + 2 + 3,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: 3,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 13,
    });
    expect(response.headers.get('x-model')).toBe('openai/gpt-4o-mini');
    expect(response.headers.get('x-provider')).toBe('openai');
    // The response cache does not serve this endpoint, and says so as for a request it does not look up.
    expect(response.headers.get('x-cache-status')).toBe('skip');
    expect(response.headers.get('cache-status')).toBe('gateway; fwd=bypass');

    const chat = await client.chat.completions
      .create(
        {
          model: 'openai/gpt-4o-mini',
          messages: [
            { role: 'system', content: 'Be brief' },
            { role: 'user', content: 'Bonjour, passerelle' },
          ],
        },
        { headers: { 'x-gw-tag': 'as-chat' } },
      )
      .withResponse();
    expect(chat.data.choices[0]?.message.content).toBe(data.output_text);
    expect(response.headers.get('x-cost-cents')).toBe(chat.response.headers.get('x-cost-cents'));
    const [asResponse, asChat] = await Promise.all([
      logged(response.headers.get('x-request-id')),
      logged(chat.response.headers.get('x-request-id')),
    ]);
    expect(asResponse.endpoint).toBe('/v1/responses');
    // Its record says what its header said of the cache.
    expect(asResponse.cache_status).toBe('skip');
    expect(BigInt(asResponse.cost_nanos)).toBeGreaterThan(0n);
    expect(asResponse.cost_nanos).toBe(asChat.cost_nanos);
    expect(asResponse.usage).toEqual(asChat.usage);
    // And in the account's usage, each under its own tag.
    const usage = await eventually(
      async () =>
        json(await fetch(`${gateway.url}/v1/usage/by-tag`, { headers: { authorization: `Bearer ${key}` } })),
      (u) =>
        ['as-response', 'as-chat'].every((tag) => u.data.some((row: { tag: string }) => row.tag === tag)),
      5000,
    );
    const byTag = (tag: string) => usage.data.find((row: { tag: string }) => row.tag === tag);
    expect(byTag('as-response').requests).toBe(1);
    expect(byTag('as-response').cost_cents).toBe(byTag('as-chat').cost_cents);
    expect(byTag('as-response').cost_cents).toBeGreaterThan(0);
  });

  it('leaves the same balance as the chat completion does', async () => {
    const text = Array.from({ length: 5000 }, (_, i) => `word${i % 50}`).join(' ');
    const [a, b] = [await newAccount('balance-responses', 100), await newAccount('balance-chat', 100)];
    await sdk(a.key).responses.create({ model: 'openai/gpt-4o', input: text });
    await sdk(b.key).chat.completions.create({
      model: 'openai/gpt-4o',
      messages: [{ role: 'user', content: text }],
    });
    const balance = (apiKey: string) =>
      eventually(
        async () =>
          json(await fetch(`${gateway.url}/v1/balance`, { headers: { authorization: `Bearer ${apiKey}` } })),
        (body) => body.cents < 100,
        5000,
      );
    const [afterResponse, afterChat] = [await balance(a.key), await balance(b.key)];
    expect(afterResponse.cents).toBeLessThan(95);
    expect(afterResponse).toEqual(afterChat);
  });

  it('serves an Anthropic model, translated as /v1/messages is', async () => {
    const data = await client.responses.create({
      model: 'anthropic/claude-sonnet-4-5',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'Hello from the Responses API' }] }],
      max_output_tokens: 100,
    });
    expect(data.status).toBe('completed');
    expect(data.model).toBe('anthropic/claude-sonnet-4-5');
    expect(data.output_text).toBe('echo: Hello from the Responses API');
    expect(data.usage?.input_tokens).toBe(5 + 3);
  });

  it('marks a response cut by max_output_tokens incomplete', async () => {
    const data = await client.responses.create({
      model: 'openai/gpt-4o-mini',
      input: 'alpha beta gamma delta epsilon',
      max_output_tokens: 2,
    });
    expect(data.status).toBe('incomplete');
    expect(data.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(data.output_text).toBe('echo: alpha');
    expect(data.usage?.output_tokens).toBe(2);
  });

  it('fills a JSON schema asked for in text.format', async () => {
    const data = await client.responses.create({
      model: 'openai/gpt-4o-mini',
      input: 'A city, please',
      text: {
        format: {
          type: 'json_schema',
          name: 'city',
          schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        },
      },
    });
    expect(Object.keys(JSON.parse(data.output_text))).toEqual(['name']);
    expect(data.text?.format).toMatchObject({ type: 'json_schema', name: 'city' });
  });

  it('gives the reasoning of a model that has it as a reasoning item', async () => {
    const data = await client.responses.create({
      model: 'openai/o3',
      input: 'why the sky is blue',
      reasoning: { effort: 'low' },
    });
    expect(data.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    expect(data.output[0]).toMatchObject({
      content: [{ type: 'reasoning_text', text: 'thinking about: why the sky is blue' }],
    });
    expect(data.usage?.output_tokens_details.reasoning_tokens).toBe(7);
  });
});

describe('function tools', () => {
  it('round-trips a call: the function_call item, then its output with previous_response_id', async () => {
    const first = await client.responses.create({
      model: 'openai/gpt-4o-mini',
      input: 'What is the weather in Paris?',
      tools: [weatherTool],
      tool_choice: 'auto',
    });
    expect(first.status).toBe('completed');
    expect(first.output).toHaveLength(1);
    const call = first.output[0];
    if (call?.type !== 'function_call') throw new Error(`expected a function call, got ${call?.type}`);
    expect(call).toMatchObject({ name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' });
    expect(call.call_id).not.toBe('');
    expect(first.tools).toMatchObject([{ type: 'function', name: 'get_weather' }]);

    const second = await client.responses.create({
      model: 'openai/gpt-4o-mini',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 21 degrees' }],
      tools: [weatherTool],
    });
    expect(second.previous_response_id).toBe(first.id);
    expect(second.output_text).toBe('echo: What is the weather in Paris?');
    // user (6 words) + the assistant's call (no text) + the tool result (3 words), each + 3.
    expect(second.usage?.input_tokens).toBe(9 + 3 + 6);

    // Stateless, the same conversation sent whole is the same request.
    const whole = await client.responses.create({
      model: 'openai/gpt-4o-mini',
      input: [
        { role: 'user', content: 'What is the weather in Paris?' },
        { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
        { type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 21 degrees' },
      ],
      tools: [weatherTool],
    });
    expect(whole.output_text).toBe(second.output_text);
    expect(whole.usage).toEqual(second.usage);
  });

  it('streams a call as function-call argument events', async () => {
    const stream = client.responses.stream({
      model: 'openai/gpt-4o-mini',
      input: 'weather in Lyon?',
      tools: [weatherTool],
    });
    const types: string[] = [];
    let args = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.function_call_arguments.delta') args += event.delta;
    }
    const final = await stream.finalResponse();
    expect(types[0]).toBe('response.created');
    expect(types).toContain('response.function_call_arguments.delta');
    expect(types.slice(-3)).toEqual([
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(args).toBe('{"city":"Paris"}');
    expect(final.output).toMatchObject([{ type: 'function_call', name: 'get_weather', arguments: args }]);
  });
});

describe('streaming', () => {
  it('sends the documented events in order, numbered, and the stream reads back as retrieve gives it', async () => {
    const stream = client.responses.stream({ model: 'openai/gpt-4o-mini', input: 'one two three' });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    const deltas = events.filter((e) => e.type === 'response.output_text.delta').length;
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      ...Array(deltas).fill('response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(deltas).toBeGreaterThan(1);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    // The SDK's stream helper leaves output_text to the caller.
    expect(final.output).toMatchObject([{ type: 'message', content: [{ text: 'echo: one two three' }] }]);
    expect(final.status).toBe('completed');
    expect(final.usage).toMatchObject({ input_tokens: 6, output_tokens: 4, total_tokens: 10 });

    const completed = events.at(-1);
    if (completed?.type !== 'response.completed') throw new Error('the stream did not complete');
    const read = await client.responses.retrieve(final.id);
    expect(read).toEqual({ ...completed.response, output_text: 'echo: one two three' });
  });

  it('streams an Anthropic model, and bills the stream as the same chat stream', async () => {
    const { data: stream, response } = await client.responses
      .create({ model: 'anthropic/claude-sonnet-4-5', input: 'four five six', stream: true })
      .withResponse();
    let text = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(text).toBe('echo: four five six');
    expect(completed?.usage?.output_tokens).toBe(4);
    const chat = await client.chat.completions
      .create({
        model: 'anthropic/claude-sonnet-4-5',
        messages: [{ role: 'user', content: 'four five six' }],
        stream: true,
      })
      .withResponse();
    for await (const _ of chat.data) {
      // drained: the stream settles at its end
    }
    const [a, b] = await Promise.all([
      logged(response.headers.get('x-request-id')),
      logged(chat.response.headers.get('x-request-id')),
    ]);
    expect(a.stream).toBe(true);
    expect(a.cost_nanos).toBe(b.cost_nanos);
  });
});

describe('a stream that fails upstream', () => {
  it('ends with an error event, which the SDK raises as an API error', async () => {
    openai.script({ kind: 'disconnect_mid_stream', afterChunks: 2 });
    const response = await fetch(`${gateway.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o', input: 'one two three four', stream: true }),
    });
    expect(response.status).toBe(200);
    const frames = (await response.text()).split('\n\n').filter((frame) => frame !== '');
    const events = frames.map((frame) => {
      const [event, data] = frame.split('\n');
      return { event: event?.replace(/^event: /, ''), data: JSON.parse(data?.replace(/^data: /, '') ?? '') };
    });
    expect(events[0]?.event).toBe('response.created');
    expect(events.every((e) => e.event === e.data.type)).toBe(true);
    expect(events.at(-1)).toMatchObject({
      event: 'error',
      data: { type: 'error', code: 'provider_error', error: { type: 'provider_error', code: 502 } },
    });
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));

    openai.script({ kind: 'disconnect_mid_stream', afterChunks: 2 });
    await expect(
      client.responses.stream({ model: 'openai/gpt-4o', input: 'one two three' }).finalResponse(),
    ).rejects.toBeInstanceOf(OpenAI.APIError);
  });
});

describe('stored responses', () => {
  it('retrieves a response and lists its input items, newest first by default', async () => {
    const created = await client.responses.create({
      model: 'openai/gpt-4o-mini',
      input: [
        { role: 'developer', content: 'Answer in French' },
        { role: 'user', content: [{ type: 'input_text', text: 'first question' }] },
        { role: 'assistant', content: 'first answer' },
        { role: 'user', content: 'second question' },
      ],
      metadata: { ticket: 'T-1' },
    });
    const read = await client.responses.retrieve(created.id);
    expect(read).toEqual(created);
    expect(read.metadata).toEqual({ ticket: 'T-1' });

    const page = await client.responses.inputItems.list(created.id, { limit: 3 });
    expect(page.data).toHaveLength(3);
    expect(page.has_more).toBe(true);
    expect(page.data[0]).toMatchObject({
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'second question' }],
    });
    const all: OpenAI.Responses.ResponseItem[] = [];
    for await (const item of client.responses.inputItems.list(created.id, { limit: 2, order: 'asc' }))
      all.push(item);
    expect(all.map((item) => (item.type === 'message' ? item.role : item.type))).toEqual([
      'developer',
      'user',
      'assistant',
      'user',
    ]);
    expect(new Set(all.map((item) => item.id)).size).toBe(4);
  });

  it('continues a conversation with previous_response_id, without the earlier instructions', async () => {
    const first = await client.responses.create({
      model: 'openai/gpt-4o-mini',
      instructions: 'Be brief and kind',
      input: 'alpha beta',
    });
    const second = await client.responses.create({
      model: 'openai/gpt-4o-mini',
      previous_response_id: first.id,
      input: 'gamma',
    });
    expect(second.output_text).toBe('echo: gamma');
    // user "alpha beta" (5) + assistant "echo: alpha beta" (6) + user "gamma" (4): the instructions are not carried.
    expect(second.usage?.input_tokens).toBe(15);
    const third = await client.responses.create({
      model: 'anthropic/claude-sonnet-4-5',
      previous_response_id: second.id,
      input: 'delta',
      instructions: 'Short',
    });
    expect(third.usage?.input_tokens).toBe(4 + 15 + 5 + 4);
  });

  it('keeps responses within their account: another account reads a 404', async () => {
    const created = await client.responses.create({ model: 'local/echo', input: 'mine' });
    const other = sdk((await newAccount('other-tenant', 100)).key);
    await expect(other.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.responses.inputItems.list(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.responses.delete(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(
      other.responses.create({ model: 'local/echo', input: 'yours?', previous_response_id: created.id }),
    ).rejects.toMatchObject({ status: 404 });
    expect((await client.responses.retrieve(created.id)).id).toBe(created.id);
  });

  it('lets a main key read its sub-accounts’ responses, and a sub-account only its own', async () => {
    const sub = async (name: string) => {
      const response = await fetch(`${gateway.url}/v1/sub-accounts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name, spend_cap_cents: 50 }),
      });
      expect(response.status).toBe(200);
      return sdk((await json(response)).key);
    };
    const [first, second] = [await sub('team-one'), await sub('team-two')];
    const created = await first.responses.create({ model: 'local/echo', input: 'team one asks' });
    expect((await first.responses.retrieve(created.id)).output_text).toBe('team one asks');
    expect((await client.responses.retrieve(created.id)).id).toBe(created.id);
    await expect(second.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    const own = await client.responses.create({ model: 'local/echo', input: 'the account asks' });
    await expect(first.responses.retrieve(own.id)).rejects.toMatchObject({ status: 404 });
  });

  it('deletes a response: it is then not found, not even to continue from', async () => {
    const created = await client.responses.create({ model: 'local/echo', input: 'forget me' });
    await client.responses.retrieve(created.id);
    await client.responses.delete(created.id);
    await expect(client.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(client.responses.delete(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(
      client.responses.create({ model: 'local/echo', input: 'again', previous_response_id: created.id }),
    ).rejects.toMatchObject({ status: 404 });
  });

  it('keeps the input of a request that repeats a deleted response’s', async () => {
    const input = 'asked, deleted, asked again';
    const first = await client.responses.create({ model: 'local/echo', input });
    await client.responses.retrieve(first.id);
    await client.responses.delete(first.id);
    // The same request body again: deleting the first erased the stored copy, so this one must store it anew.
    const second = await client.responses.create({ model: 'local/echo', input });
    await client.responses.retrieve(second.id);
    const items = await client.responses.inputItems.list(second.id);
    expect(items.data).toMatchObject([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] },
    ]);
    const next = await client.responses.create({
      model: 'local/echo',
      input: 'and?',
      previous_response_id: second.id,
    });
    // The earlier turn is carried: its input and answer count towards this one's.
    expect(next.usage?.input_tokens).toBeGreaterThan(second.usage?.input_tokens ?? 0);
  });

  it('does not serve a response created with store: false', async () => {
    const created = await client.responses.create({ model: 'local/echo', input: 'ephemeral', store: false });
    expect((created as unknown as { store: boolean }).store).toBe(false);
    await expect(client.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    const error = await client.responses
      .create({ model: 'local/echo', input: 'next', previous_response_id: created.id })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400 });
    expect(String((error as Error).message)).toContain('store: false');
  });

  it('refuses previous_response_id with a 400 saying why when the account keeps no bodies', async () => {
    const account = await newAccount('no-bodies', 100);
    await gateway.admin(`/accounts/${account.id}/settings`, { request_bodies: 'drop' });
    const own = sdk(account.key);
    // The setting reaches the live state a moment after the admin call: a response made before it kept its bodies.
    const made = await eventually(
      async () => {
        const { data, response } = await own.responses
          .create({ model: 'local/echo', input: 'not kept' })
          .withResponse();
        return { created: data, record: await logged(response.headers.get('x-request-id'), account.key) };
      },
      ({ record }) => record.bodies_kept === false,
      5000,
    );
    expect(made.record.bodies_kept).toBe(false);
    const { created } = made;
    const error = await own.responses
      .create({ model: 'local/echo', input: 'next', previous_response_id: created.id })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400 });
    expect(String((error as Error).message)).toMatch(/previous_response_id.*bodies are not kept/);
  });
});

describe('refusals', () => {
  it('refuses a built-in tool with a 400 naming the field', async () => {
    const error = await client.responses
      .create({ model: 'openai/gpt-4o-mini', input: 'news?', tools: [{ type: 'web_search' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as Error).message).toContain("'tools[0].type'");
    expect((error as Error).message).toContain('web_search');
  });

  it('names the Responses field when the chat path refuses one', async () => {
    const error = await client.responses
      .create({ model: 'openai/gpt-4o-mini', input: 'hi', max_output_tokens: 10_000_000 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as Error).message).toMatch(/^400 'max_output_tokens': at most \d+ for openai\/gpt-4o-mini/);
  });

  it('refuses with a 402 when the balance cannot cover the request, and charges nothing', async () => {
    const poor = sdk((await newAccount('poor', 0)).key);
    await expect(
      poor.responses.create({ model: 'openai/gpt-4o-mini', input: 'hello' }),
    ).rejects.toMatchObject({
      status: 402,
    });
    await expect(
      poor.responses.create({ model: 'openai/gpt-4o-mini', input: 'hello', stream: true }),
    ).rejects.toMatchObject({ status: 402 });
  });
});

describe('POST /v1/completions (legacy)', () => {
  const instruct = 'openai/gpt-3.5-turbo-instruct';

  it('serves an instruct-era model natively, charged as the chat completion of the prompt', async () => {
    const { data, response } = await client.completions
      .create({ model: instruct, prompt: 'Once upon a time', max_tokens: 20 })
      .withResponse();
    expect(data).toMatchObject({
      object: 'text_completion',
      model: instruct,
      choices: [{ index: 0, text: 'echo: Once upon a time', finish_reason: 'stop' }],
      usage: { prompt_tokens: 4 + 3, completion_tokens: 5, total_tokens: 12 },
    });
    expect(response.headers.get('x-model')).toBe(instruct);
    expect(response.headers.get('x-cache-status')).toBe('skip');
    const chat = await client.chat.completions
      .create({ model: instruct, messages: [{ role: 'user', content: 'Once upon a time' }], max_tokens: 20 })
      .withResponse();
    const [legacy, asChat] = await Promise.all([
      logged(response.headers.get('x-request-id')),
      logged(chat.response.headers.get('x-request-id')),
    ]);
    expect(legacy.endpoint).toBe('/v1/completions');
    expect(BigInt(legacy.cost_nanos)).toBeGreaterThan(0n);
    expect(legacy.cost_nanos).toBe(asChat.cost_nanos);
  });

  it('stops at OpenAI’s default of 16 tokens when max_tokens is not given', async () => {
    const prompt = Array.from({ length: 30 }, (_, i) => `w${i}`).join(' ');
    const data = await client.completions.create({ model: instruct, prompt });
    expect(data.choices[0]?.finish_reason).toBe('length');
    expect(data.usage?.completion_tokens).toBe(16);
  });

  it('streams the provider’s chunks, with the usage and its cost when asked, and logs the text', async () => {
    const { data: stream, response } = await client.completions
      .create({ model: instruct, prompt: 'a b c', stream: true, stream_options: { include_usage: true } })
      .withResponse();
    let text = '';
    let usage: (OpenAI.CompletionUsage & { cost_cents?: number }) | undefined;
    for await (const chunk of stream) {
      expect(chunk.model).toBe(instruct);
      text += chunk.choices[0]?.text ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('echo: a b c');
    expect(usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 4 });
    expect(usage?.cost_cents).toBeGreaterThan(0);
    const record = await logged(response.headers.get('x-request-id'));
    expect(record.stream).toBe(true);
    expect(record.response_body.choices[0].text).toBe('echo: a b c');
  });

  it('refuses a chat model with a 400 saying to use chat completions, and an unknown model with a 404', async () => {
    const error = await client.completions
      .create({ model: 'openai/gpt-4o-mini', prompt: 'Once upon a time' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as Error).message).toMatch(
      /^400 'model': openai\/gpt-4o-mini does not serve the legacy completions API/,
    );
    expect((error as Error).message).toContain('POST /v1/chat/completions');
    await expect(client.completions.create({ model: 'nope/model', prompt: 'x' })).rejects.toMatchObject({
      status: 404,
    });
    await expect(client.completions.create({ model: instruct, prompt: 'x', n: 2 })).rejects.toMatchObject({
      status: 400,
    });
  });
});
