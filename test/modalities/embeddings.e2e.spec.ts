import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/catalog/index.ts';
import { countTextTokens } from '../../src/tokens/count.ts';
import { type Json, json } from '../support/json.ts';
import { tokens, vector } from '../upstreams/modality-model.ts';
import { centsFor, freshTag, type ModalityWorld, startModalityWorld } from './support.ts';

// Simulators report usage as the word count (modality-model.ts); Gemini reports none, so the gateway counts.
const catalog = buildCatalog();
const texts = ['the quick brown fox', 'jumps over the lazy dog'];
const words = texts.reduce((sum, t) => sum + tokens(t), 0);
const counted = texts.reduce((sum, t) => sum + countTextTokens(t), 0);
const priceOf = (id: string) => catalog.get(id)?.prices.inputNanosPerMillion ?? 0n;

let world: ModalityWorld;
beforeAll(async () => {
  world = await startModalityWorld();
});
afterAll(async () => {
  await world?.close();
});

describe.each([
  ['openai/text-embedding-3-small', 'openai', words, false],
  ['mistral/mistral-embed', 'mistral', words, false],
  ['google/gemini-embedding-001', 'google', counted, true],
  ['cohere/embed-v4.0', 'cohere', words, false],
  ['voyageai/voyage-3.5', 'voyageai', words, false],
] as const)('POST /v1/embeddings with %s', (model, provider, billedTokens, estimated) => {
  it('answers in OpenAI’s shape and charges the tokens at the catalog price, in the usage report too', async () => {
    const tag = freshTag('embed');
    const { data, response } = await world.client.embeddings
      .create({ model, input: texts, encoding_format: 'float' }, { headers: { 'x-gw-tag': tag } })
      .withResponse();
    expect(data.object).toBe('list');
    expect(data.model).toBe(model);
    expect(data.data).toEqual(
      texts.map((t, index) => ({ object: 'embedding', index, embedding: vector(t) })),
    );
    expect(data.usage).toEqual({
      prompt_tokens: billedTokens,
      total_tokens: billedTokens,
      ...(estimated ? { estimated: true } : {}),
    });
    expect(response.headers.get('x-model')).toBe(model);
    expect(response.headers.get('x-provider')).toBe(provider);
    expect(Number(response.headers.get('x-latency-ms'))).toBeGreaterThanOrEqual(0);
    const cents = centsFor([
      { item: 'input_tokens', quantity: billedTokens, unitPriceNanosPerMillion: priceOf(model) },
    ]);
    expect(Number(response.headers.get('x-cost-cents'))).toBe(cents);
    expect(cents).toBeGreaterThan(0);
    const row = await world.usageOf(tag);
    expect(row).toMatchObject({ requests: 1, units: billedTokens });
    expect(row.cost_cents).toBeCloseTo(cents, 7);
  });

  it('answers base64 (float32, little-endian) when the SDK asks for it, which it does by default', async () => {
    const decoded = await world.client.embeddings.create({ model, input: texts[0] as string });
    expect(decoded.data[0]?.embedding).toEqual(vector(texts[0] as string));
    const raw = await world.client.embeddings.create({ model, input: texts, encoding_format: 'base64' });
    const encoded = raw.data[0]?.embedding as unknown as string;
    expect(typeof encoded).toBe('string');
    expect(Buffer.from(encoded, 'base64')).toEqual(
      Buffer.from(new Float32Array(vector(texts[0] as string)).buffer),
    );
  });
});

describe('POST /v1/embeddings options and refusals', () => {
  it('passes dimensions on to the provider', async () => {
    const data = await world.client.embeddings.create({
      model: 'openai/text-embedding-3-small',
      input: 'short',
      dimensions: 4,
    });
    expect(data.data[0]?.embedding).toHaveLength(4);
    const sent: Json = world.sims.openai.requests.at(-1)?.body;
    expect(sent).toMatchObject({ model: 'text-embedding-3-small', dimensions: 4, encoding_format: 'float' });
  });

  it.each([
    ['a missing input', { model: 'openai/text-embedding-3-small' }, "'input'"],
    ['an input of the wrong type', { model: 'openai/text-embedding-3-small', input: 42 }, "'input'"],
    ['an empty input list', { model: 'openai/text-embedding-3-small', input: [] }, "'input'"],
    ['a missing model', { input: 'hello' }, "'model'"],
    [
      'an unknown encoding',
      { model: 'openai/text-embedding-3-small', input: 'x', encoding_format: 'hex' },
      "'encoding_format'",
    ],
  ])('refuses %s with 400 naming the field', async (_, body, field) => {
    const response = await world.post('/embeddings', body);
    expect(response.status).toBe(400);
    const error = (await json(response)).error;
    expect(error).toMatchObject({ type: 'invalid_request_error', code: 400 });
    expect(error.message).toContain(field);
  });

  it('refuses a chat model with 400 naming the chat endpoint', async () => {
    await expect(
      world.client.embeddings.create({ model: 'openai/gpt-4o', input: 'hello' }),
    ).rejects.toMatchObject({
      status: 400,
      error: { type: 'invalid_request_error', message: expect.stringContaining('/v1/chat/completions') },
    });
  });

  it('answers 404 model_not_found for an unknown model', async () => {
    await expect(
      world.client.embeddings.create({ model: 'openai/text-embedding-9', input: 'hello' }),
    ).rejects.toMatchObject({ status: 404, error: { type: 'model_not_found' } });
  });

  it('turns a provider 5xx into 502 provider_error and releases the hold', async () => {
    world.sims.voyage.script({ kind: 'error', status: 500 });
    const failure = await world.client.embeddings
      .create({ model: 'voyageai/voyage-3.5', input: 'hello' })
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ status: 502, error: { type: 'provider_error' } });
    const requestId = (failure as { headers: Headers }).headers.get('x-request-id');
    expect(await world.holdsOf(requestId)).toEqual(['failed']);
  });

  it('passes a provider’s refusal on as 400 with its message', async () => {
    await expect(
      world.client.embeddings.create({ model: 'openai/text-embedding-ada-002', input: 'x', dimensions: 8 }),
    ).rejects.toMatchObject({
      status: 400,
      error: { message: expect.stringContaining('does not support specifying dimensions') },
    });
  });
});
