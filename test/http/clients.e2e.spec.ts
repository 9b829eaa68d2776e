import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { toFile } from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { startAnthropicUpstream } from '../upstreams/anthropic.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

// What code written for OpenAI's or Anthropic's own API trips over, through the official SDKs and raw requests:
// provider-less model ids, error fields, ids, n, compression, keyless models, batch defaults, request ids.
let openaiUpstream: Upstream;
let anthropicUpstream: Upstream;
let gateway: TestGateway;
let client: OpenAI;
let anthropic: Anthropic;
let key: string;

beforeAll(async () => {
  [openaiUpstream, anthropicUpstream] = await Promise.all([startOpenAiUpstream(), startAnthropicUpstream()]);
  gateway = await startTestGateway(
    {
      OPENAI_API_KEY: 'sk-upstream-openai',
      OPENAI_BASE_URL: `${openaiUpstream.url}/v1`,
      ANTHROPIC_API_KEY: 'sk-upstream-anthropic',
      ANTHROPIC_BASE_URL: anthropicUpstream.url,
    },
    { workerIntervalsMs: { batches: 50 } },
  );
  const account = await json(await gateway.admin('/accounts', { name: 'clients' }));
  key = account.key;
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'funding' });
  client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.close();
  await Promise.all([openaiUpstream?.close(), anthropicUpstream?.close()]);
});

const auth = () => ({ authorization: `Bearer ${key}` });
const say = (text: string) => [{ role: 'user' as const, content: text }];
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { ...auth(), 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describe('provider-less model ids', () => {
  it('resolve to the one servable model of that name, reported in X-Model, on chat, messages and embeddings', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: say('hello') })
      .withResponse();
    expect(response.headers.get('x-model')).toBe('openai/gpt-4o-mini');
    expect(data.model).toBe('openai/gpt-4o-mini');

    const message = await anthropic.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 16,
      messages: say('hello'),
    });
    expect(message.model).toBe('anthropic/claude-sonnet-4-5');

    const local = await client.embeddings.create({ model: 'embed', input: 'hello' });
    expect(local.model).toBe('local/embed');
  });

  it('are a 404 naming the candidates when several servable models share the name', async () => {
    // openai/gpt-4o and openrouter's, azure's, ... : only OpenAI has a key here, so `gpt-4o` is not ambiguous;
    // `moderation` names openai/moderation and local/moderation, both servable.
    const response = await post('/v1/moderations', { model: 'moderation', input: 'hi' });
    expect(response.status).toBe(404);
    const { error } = await json(response);
    expect(error).toMatchObject({ type: 'model_not_found', param: 'model', code: 404 });
    expect(error.message).toMatch(/did you mean .*local\/moderation/);
    expect(error.message).toMatch(/openai\/moderation/);
    await expect(
      client.chat.completions.create({ model: 'no-such-model-anywhere', messages: say('x') }),
    ).rejects.toMatchObject({ status: 404, type: 'model_not_found', param: 'model' });
  });

  it('run in a batch line', async () => {
    const line = JSON.stringify({
      custom_id: 'bare',
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'echo', messages: say('from a batch') },
    });
    const file = await client.files.create({
      file: await toFile(Buffer.from(`${line}\n`), 'bare.jsonl'),
      purpose: 'batch',
    });
    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const done = await eventually(
      () => client.batches.retrieve(created.id),
      (b) => b.status === 'completed',
      10_000,
    );
    const output = await (await client.files.content(done.output_file_id as string)).text();
    const result = JSON.parse(output.trim());
    expect(result.response.body).toMatchObject({
      model: 'local/echo',
      choices: [{ message: { content: 'from a batch' } }],
    });
    expect(result.response.body.id).toMatch(/^chatcmpl-[0-9a-f]{24}$/);
  });
});

describe('errors where the SDKs read them', () => {
  it('name the field at fault in param, with code the status', async () => {
    const response = await post('/v1/chat/completions', { model: 'local/echo', messages: say('x'), n: 0 });
    expect(response.status).toBe(400);
    expect((await json(response)).error).toMatchObject({
      type: 'invalid_request_error',
      param: 'n',
      code: 400,
    });
    await expect(
      client.chat.completions.create({ model: 'local/echo', messages: say('x'), max_tokens: 10_000_000 }),
    ).rejects.toMatchObject({ status: 400, param: 'max_tokens' });
  });

  it('keep Anthropic’s envelope on /v1/messages with the spec’s types and the numeric code', async () => {
    const missing = await post('/v1/messages', { model: 'nope/nothing', max_tokens: 8, messages: say('x') });
    expect(missing.status).toBe(404);
    expect(await json(missing)).toMatchObject({
      type: 'error',
      error: { type: 'model_not_found', code: 404, message: expect.stringMatching(/nope\/nothing/) },
    });
    const unknown = await fetch(`${gateway.url}/v1/messages/batches/nope`, { headers: auth() });
    expect(unknown.status).toBe(404);
    expect(await json(unknown)).toMatchObject({
      type: 'error',
      error: { type: 'not_found_error', code: 404 },
      request_id: unknown.headers.get('x-request-id'),
    });
    await expect(anthropic.messages.batches.retrieve('msgbatch_nope')).rejects.toBeInstanceOf(
      Anthropic.NotFoundError,
    );
  });
});

describe('chat completions', () => {
  it('have a unique id each', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++) {
      ids.add((await client.chat.completions.create({ model: 'local/echo', messages: say('x') })).id);
    }
    expect(ids.size).toBe(3);
    for (const id of ids) expect(id).toMatch(/^chatcmpl-[0-9a-f]{24}$/);
  });

  it('serve n choices on a local model, billed for every choice, and stream them', async () => {
    const one = await client.chat.completions.create({ model: 'local/echo', messages: say('two words') });
    const three = await client.chat.completions.create({
      model: 'local/echo',
      messages: say('two words'),
      n: 3,
    });
    expect(three.choices.map((c) => [c.index, c.message.content])).toEqual([
      [0, 'two words'],
      [1, 'two words'],
      [2, 'two words'],
    ]);
    expect(three.usage?.completion_tokens).toBe((one.usage?.completion_tokens ?? 0) * 3);
    const stream = await client.chat.completions.create({
      model: 'local/echo',
      messages: say('two words'),
      n: 2,
      stream: true,
    });
    const texts = ['', ''];
    for await (const chunk of stream) {
      for (const choice of chunk.choices) texts[choice.index] += choice.delta.content ?? '';
    }
    expect(texts).toEqual(['two words', 'two words']);
  });

  it('refuse n > 1 with a 400 where the provider answers one choice', async () => {
    await expect(
      client.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages: say('x'), n: 2 }),
    ).rejects.toMatchObject({ status: 400, param: 'n' });
  });

  it('answer a forced tool call and a JSON response format on the echo models, through the SDK helpers', async () => {
    const tool = await client.chat.completions.create({
      model: 'local/echo',
      messages: say('Paris'),
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            parameters: {
              type: 'object',
              properties: { city: { type: 'string' }, days: { type: 'integer' }, unit: { enum: ['c', 'f'] } },
            },
          },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    const call = tool.choices[0]?.message.tool_calls?.[0];
    expect(tool.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call?.type === 'function' && call.function.name).toBe('get_weather');
    expect(call?.type === 'function' && JSON.parse(call.function.arguments)).toEqual({
      city: 'Paris',
      days: 1,
      unit: 'c',
    });

    const parsed = await client.chat.completions.parse({
      model: 'local/echo',
      messages: say('Lyon'),
      response_format: zodResponseFormat(z.object({ city: z.string(), nights: z.number() }), 'trip'),
    });
    expect(parsed.choices[0]?.message.parsed).toEqual({ city: 'Lyon', nights: 0.5 });

    const object = await client.chat.completions.create({
      model: 'local/echo',
      messages: say('Nice'),
      response_format: { type: 'json_object' },
    });
    expect(JSON.parse(object.choices[0]?.message.content ?? '')).toEqual({ echo: 'Nice' });

    const streamed = client.chat.completions.stream({
      model: 'local/echo',
      messages: say('Rome'),
      tools: [
        {
          type: 'function',
          function: {
            name: 'book',
            parameters: { type: 'object', properties: { city: { type: 'string' } } },
          },
        },
      ],
      tool_choice: 'required',
    });
    const final = await streamed.finalChatCompletion();
    const streamedCall = final.choices[0]?.message.tool_calls?.[0];
    expect(streamedCall?.type === 'function' && JSON.parse(streamedCall.function.arguments)).toEqual({
      city: 'Rome',
    });
  });
});

describe('the echo through Anthropic’s SDK', () => {
  it('answers a forced tool as a tool_use block', async () => {
    const message = await anthropic.messages.create({
      model: 'local/echo',
      max_tokens: 64,
      messages: say('Oslo'),
      tools: [
        {
          name: 'get_weather',
          input_schema: { type: 'object', properties: { city: { type: 'string' } } },
        },
      ],
      tool_choice: { type: 'tool', name: 'get_weather' },
    });
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toMatchObject([
      { type: 'tool_use', name: 'get_weather', input: { city: 'Oslo' } },
    ]);
  });
});

describe('keyless models of the other endpoints', () => {
  it('local/embed: deterministic unit vectors, closer for texts that share spelling', async () => {
    const { data } = await client.embeddings.create({
      model: 'local/embed',
      input: ['the cat sat on the mat', 'the cat sat on a mat', 'quarterly revenue grew'],
    });
    const [a, b, c] = data.map((d) => d.embedding);
    const dot = (x: number[] = [], y: number[] = []) => x.reduce((s, v, i) => s + v * (y[i] ?? 0), 0);
    expect(a).toHaveLength(1536);
    expect(dot(a, a)).toBeCloseTo(1, 6);
    expect(dot(a, b)).toBeGreaterThan(dot(a, c) + 0.3);
    const again = await client.embeddings.create({ model: 'local/embed', input: 'the cat sat on the mat' });
    expect(again.data[0]?.embedding).toEqual(a);
    const small = await client.embeddings.create({ model: 'local/embed', input: 'x', dimensions: 64 });
    expect(small.data[0]?.embedding).toHaveLength(64);
  });

  it('local/moderation: keyword rules in OpenAI’s categories', async () => {
    const result = await client.moderations.create({
      model: 'local/moderation',
      input: ['I will kill you', 'What a lovely day'],
    });
    expect(result.results[0]).toMatchObject({
      flagged: true,
      categories: { violence: true, 'harassment/threatening': true, sexual: false },
    });
    expect(result.results[1]?.flagged).toBe(false);
  });
});

describe('the model list', () => {
  it('filters on available=true (and false)', async () => {
    const available = await client.models.list({ query: { available: 'true' } } as never);
    const ids = available.data.map((m) => m.id);
    expect(ids).toContain('local/echo');
    expect(ids).toContain('openai/gpt-4o-mini');
    expect(ids).not.toContain('google/gemini-2.5-flash');
    const unavailable = await json(
      await fetch(`${gateway.url}/v1/models?available=false`, { headers: auth() }),
    );
    expect(unavailable.data.every((m: { available: boolean }) => !m.available)).toBe(true);
    expect(unavailable.data.length).toBeGreaterThan(100);
  });
});

/** A raw GET with its body undecoded, to see the encoding the gateway chose. */
function rawGet(path: string, headers: Record<string, string>) {
  return new Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }>(
    (resolve, reject) => {
      const req = httpRequest(`${gateway.url}${path}`, { headers: { ...auth(), ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      });
      req.on('error', reject);
      req.end();
    },
  );
}

describe('compression', () => {
  it('answers gzip or br as the client accepts, and plain to one that accepts neither', async () => {
    const plain = await rawGet('/v1/models', {});
    expect(plain.headers['content-encoding']).toBeUndefined();
    const gzip = await rawGet('/v1/models', { 'accept-encoding': 'gzip, deflate' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.body).equals(plain.body)).toBe(true);
    const br = await rawGet('/v1/models', { 'accept-encoding': 'br, gzip' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true);
    expect(br.body.length).toBeLessThan(plain.body.length / 5);
  });

  it('never compresses a stream: chunks reach a client that accepts gzip one by one, as they are sent', async () => {
    const chunks: string[] = [];
    const headers = await new Promise<Record<string, string | string[] | undefined>>((resolve, reject) => {
      const req = httpRequest(
        `${gateway.url}/v1/chat/completions`,
        {
          method: 'POST',
          headers: { ...auth(), 'content-type': 'application/json', 'accept-encoding': 'gzip, br' },
        },
        (res) => {
          res.setEncoding('utf8');
          res.on('data', (c: string) => chunks.push(c));
          res.on('end', () => resolve(res.headers));
        },
      );
      req.on('error', reject);
      req.end(
        JSON.stringify({ model: 'local/echo', stream: true, messages: say('one two three four five six') }),
      );
    });
    expect(headers['content-encoding']).toBeUndefined();
    expect(headers['content-type']).toMatch(/^text\/event-stream/);
    const text = chunks.join('');
    expect(text).toContain('data: [DONE]');
    expect(text.match(/^data: /gm)?.length).toBeGreaterThan(6);
  });
});

describe('batches with only input_file_id and endpoint', () => {
  it('default the window to 24h and take /chat/completions without the version', async () => {
    const line = JSON.stringify({
      custom_id: 'a',
      method: 'POST',
      url: '/chat/completions',
      body: { model: 'local/echo', messages: say('short form') },
    });
    const file = await client.files.create({
      file: await toFile(Buffer.from(line), 'a.jsonl'),
      purpose: 'batch',
    });
    const response = await post('/v1/batches', { input_file_id: file.id, endpoint: '/chat/completions' });
    expect(response.status).toBe(200);
    const batch = await json(response);
    expect(batch).toMatchObject({ endpoint: '/v1/chat/completions', completion_window: '24h' });
    const done = await eventually(
      () => client.batches.retrieve(batch.id),
      (b) => b.status === 'completed',
      10_000,
    );
    expect(done.request_counts).toMatchObject({ total: 1, completed: 1, failed: 0 });
  });

  it('run /v1/embeddings lines at the batch price', async () => {
    const lines = ['alpha beta', 'gamma delta'].map((input, i) =>
      JSON.stringify({
        custom_id: `e${i}`,
        method: 'POST',
        url: '/v1/embeddings',
        body: { model: 'local/embed', input, dimensions: 8 },
      }),
    );
    const file = await client.files.create({
      file: await toFile(Buffer.from(lines.join('\n')), 'e.jsonl'),
      purpose: 'batch',
    });
    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/embeddings',
      completion_window: '24h',
    });
    const done = await eventually(
      () => client.batches.retrieve(created.id),
      (b) => b.status === 'completed',
      10_000,
    );
    const output = (await (await client.files.content(done.output_file_id as string)).text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(output.map((o) => o.custom_id).sort()).toEqual(['e0', 'e1']);
    expect(output[0].response).toMatchObject({
      status_code: 200,
      body: { object: 'list', model: 'local/embed', data: [{ object: 'embedding' }] },
    });
    expect(output[0].response.body.data[0].embedding).toHaveLength(8);
  });

  it('refuse an endpoint they do not run, naming the field', async () => {
    const response = await post('/v1/batches', {
      input_file_id: 'file-x',
      endpoint: '/v1/images/generations',
    });
    expect(response.status).toBe(400);
    expect((await json(response)).error).toMatchObject({ param: 'endpoint', code: 400 });
  });
});

describe('X-Request-Id', () => {
  it('echoes any printable value up to 200 characters, and replaces others', async () => {
    const get = (id: string) =>
      fetch(`${gateway.url}/v1/balance`, { headers: { ...auth(), 'x-request-id': id } });
    for (const id of ['trace 42/αβ'.replace('αβ', 'ab'), 'a{b}c<d>e"f\'g!@#$%^&*()', 'x'.repeat(200)]) {
      expect((await get(id)).headers.get('x-request-id')).toBe(id);
    }
    const long = (await get('y'.repeat(201))).headers.get('x-request-id');
    expect(long).toMatch(/^[0-9a-f-]{36}$/);
  });
});
