import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { startOpenAiModalitiesUpstream } from '../upstreams/openai-modalities.ts';
import type { Upstream } from '../upstreams/types.ts';

// Chat is local/echo (it answers "echo" of the question it was asked), so a semantic hit shows whose answer it is;
// the prompt is embedded by the simulators' meaning model (test/upstreams/meaning-embedding.ts).
let embeddings: Upstream;
let gateway: TestGateway;
let key: string;
let client: OpenAI;

const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
/** A system prompt of its own per test, so that tests never find each other's entries. */
const system = () => `You are terse. ${randomBytes(4).toString('hex')}`;

async function ask(
  prompt: string,
  question: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  const { data, response } = await client.chat.completions
    .create(
      {
        model: 'local/echo',
        messages: [
          { role: 'system', content: prompt },
          { role: 'user', content: question },
        ],
        cache: 'semantic',
        ...extra,
      } as OpenAI.ChatCompletionCreateParamsNonStreaming,
      { headers },
    )
    .withResponse();
  return {
    text: data.choices[0]?.message.content,
    status: response.headers.get('x-cache-status'),
    cost: Number(response.headers.get('x-cost-cents')),
    id: response.headers.get('x-request-id') as string,
  };
}

beforeAll(async () => {
  embeddings = await startOpenAiModalitiesUpstream();
  gateway = await startTestGateway({
    OPENAI_API_KEY: 'sk-upstream',
    OPENAI_BASE_URL: `${embeddings.url}/v1`,
    GATEWAY_CACHE_EMBEDDING_MODEL: 'openai/text-embedding-3-large',
  });
  const account = await json(await gateway.admin('/accounts', { name: 'semantic' }));
  key = account.key;
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 1000, reference: 'p' });
  client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.close();
  await embeddings?.close();
});

describe('the semantic cache', () => {
  it('answers a paraphrase from the cache in semantic mode, at half the original charge', async () => {
    const prompt = system();
    const first = await ask(prompt, 'What is the capital of France?');
    expect(first.status).toBe('miss');
    const paraphrase = await ask(prompt, "Tell me France's capital, please.");
    expect(paraphrase.status).toMatch(/^hit; type=semantic; similarity=(0\.99\d|1\.000)$/);
    expect(paraphrase.text).toBe(first.text);
    expect(paraphrase.cost).toBe(Math.ceil(Math.round(first.cost * 1e7) / 2) / 1e7);
    const record = await eventually(
      async () => json(await call('GET', `/requests/${paraphrase.id}`)),
      (r) => r.id === paraphrase.id,
      3000,
    );
    expect(record.cache.hit).toMatchObject({ type: 'semantic', source_request_id: first.id });
    expect(record.cache.hit.similarity).toBeGreaterThan(0.95);
    // The lookup's embedding is the gateway's cost: recorded, never in what the client was charged.
    expect(BigInt(record.cache.embedding_cost_nanos)).toBeGreaterThan(0n);
    expect(record.cost_cents).toBe(paraphrase.cost);
  });

  it('serves a paraphrase only in semantic mode: auto and force look up exactly', async () => {
    const prompt = system();
    await ask(prompt, 'How do I bake sourdough bread?');
    const auto = { cache: 'auto', temperature: 0 };
    expect((await ask(prompt, 'Explain how to bake sourdough bread', auto)).status).toBe('miss');
    expect((await ask(prompt, 'Describe how to bake sourdough bread', { cache: 'force' })).status).toBe(
      'miss',
    );
    expect((await ask(prompt, 'Please, how do you bake sourdough bread?')).status).toMatch(
      /^hit; type=semantic/,
    );
  });

  it('finds a paraphrase of what force and auto stored moments before; the embedding is the gateway’s cost', async () => {
    const prompt = system();
    const forced = await ask(prompt, 'What is the capital of Japan?', { cache: 'force' });
    expect(forced.status).toBe('miss');
    const paraphrase = await ask(prompt, "Tell me Japan's capital, please.");
    expect(paraphrase.status).toMatch(/^hit; type=semantic; similarity=1\.000$/);
    expect(paraphrase.text).toBe(forced.text);
    // The storing request's prompt was embedded on its miss: recorded on its record, not in its charge.
    const stored = await eventually(
      async () => json(await call('GET', `/requests/${forced.id}`)),
      (r) => r.id === forced.id,
      3000,
    );
    expect(BigInt(stored.cache.embedding_cost_nanos)).toBeGreaterThan(0n);
    expect(stored.cost_cents).toBe(forced.cost);

    const repeatable = await ask(prompt, 'Which river runs through Paris?', {
      cache: 'auto',
      temperature: 0,
    });
    expect(repeatable.status).toBe('miss');
    const again = await ask(prompt, 'Tell me which river runs through Paris', { temperature: 0 });
    expect(again.status).toMatch(/^hit; type=semantic/);
    expect(again.text).toBe(repeatable.text);
    // What auto did not store (a sampled request) is not found either.
    await ask(prompt, 'Which mountain is the highest in Japan?', { cache: 'auto' });
    expect((await ask(prompt, 'Tell me the highest mountain in Japan')).status).toBe('miss');
  });

  it('misses a negation and another entity at the default threshold', async () => {
    const prompt = system();
    await ask(prompt, 'Is Paris the capital of France?');
    const negation = await ask(prompt, 'Is Paris not the capital of France?');
    expect(negation.status).toBe('miss');
    expect(negation.text).toContain('not');
    const other = await ask(prompt, 'Is Berlin the capital of Germany?');
    expect(other.status).toBe('miss');
    expect(other.text).toContain('Berlin');
  });

  it('lets a request raise the threshold but never lower it', async () => {
    const prompt = system();
    await ask(prompt, 'What is the capital of Spain?');
    const lowered = await ask(prompt, 'What is the capital of Italy?', {}, { 'x-gw-cache-threshold': '0.1' });
    expect(lowered.status).toBe('miss');
    const bad = await call(
      'POST',
      '/chat/completions',
      { model: 'local/echo', messages: [{ role: 'user', content: 'x' }], cache: 'semantic' },
      { 'x-gw-cache-threshold': 'high' },
    );
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.message).toContain('x-gw-cache-threshold');
  });

  it('lets a request raise the threshold above a near paraphrase’s similarity', async () => {
    const prompt = system();
    const stored =
      'Name the rivers of Egypt, Sudan, Ethiopia, Uganda, Kenya, Tanzania, Rwanda, Burundi, Congo and Chad';
    // One more country: similarity 0.957 (12 shared words of 12 and 13), above 0.95 and below 0.99.
    const near = stored.replace('Congo and Chad', 'Congo, Chad and Niger');
    await ask(prompt, stored);
    expect((await ask(prompt, near, {}, { 'x-gw-cache-threshold': '0.99' })).status).toBe('miss');
    // Another extra country (the miss above stored its own question): 0.957 from the first, under the default.
    const other = stored.replace('Congo and Chad', 'Congo, Chad and Mali');
    expect((await ask(prompt, other)).status).toMatch(/^hit; type=semantic; similarity=0\.95\d$/);
  });

  it('needs the same system prompt and parameters, and a single turn without tools', async () => {
    const prompt = system();
    await ask(prompt, 'What is the tallest mountain?');
    expect((await ask(system(), 'Tell me the tallest mountain')).status).toBe('miss');
    expect((await ask(prompt, 'Tell me the tallest mountain', { max_tokens: 40 })).status).toBe('miss');
    const multi = await client.chat.completions
      .create({
        model: 'local/echo',
        cache: 'semantic',
        messages: [
          { role: 'user', content: 'Hello' },
          { role: 'assistant', content: 'Hi' },
          { role: 'user', content: 'What is the tallest mountain?' },
        ],
      } as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .withResponse();
    expect(multi.response.headers.get('x-cache-status')).toBe('miss; semantic=ineligible');
  });

  it('replays a semantic hit as a stream', async () => {
    const prompt = system();
    const first = await ask(prompt, 'Which river runs through Cairo?');
    const stream = await client.chat.completions.create({
      model: 'local/echo',
      stream: true,
      cache: 'semantic',
      messages: [
        { role: 'system', content: prompt },
        { role: 'user', content: 'Tell me which river runs through Cairo' },
      ],
    } as OpenAI.ChatCompletionCreateParamsStreaming);
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe(first.text);
  });

  it('says in /v1/capabilities what each mode does and which model embeds', async () => {
    const capabilities = await json(await call('GET', '/capabilities'));
    expect(capabilities.cache).toMatchObject({
      default_mode: 'auto',
      ttl_seconds: 86_400,
      discount_percent: 50,
      semantic: { available: true, embedding_model: 'openai/text-embedding-3-large', threshold: 0.95 },
    });
    expect(Object.keys(capabilities.cache.modes)).toEqual(['auto', 'force', 'semantic', 'skip']);
    expect(capabilities.cache.modes.auto).toContain('temperature 0, or a seed given');
    expect(capabilities.cache.modes.auto).toContain('cache_default');
    expect(capabilities.cache.modes.semantic).toContain('whichever mode stored it');
  });
});
