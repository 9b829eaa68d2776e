import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dollarsPerMillion } from '../../src/contracts/money.ts';
import { type Json, json } from '../support/json.ts';
import { tokens } from '../upstreams/modality-model.ts';
import { centsFor, freshTag, type ModalityWorld, startModalityWorld } from './support.ts';

const query = 'capital of France';
const documents = ['Berlin is in Germany', 'Paris is the capital of France', 'France has a capital'];

let world: ModalityWorld;
beforeAll(async () => {
  world = await startModalityWorld();
});
afterAll(async () => {
  await world?.close();
});

describe('POST /v1/rerank', () => {
  it('orders the documents with Cohere by default, billed one search unit at $2 per 1,000', async () => {
    const tag = freshTag('rerank');
    const response = await world.post('/rerank', { query, documents }, { 'x-gw-tag': tag });
    expect(response.status).toBe(200);
    const body: Json = await json(response);
    expect(body).toEqual({
      object: 'list',
      model: 'cohere/rerank-v3.5',
      results: [
        { index: 1, relevance_score: 1, document: { text: documents[1] } },
        { index: 2, relevance_score: 2 / 3, document: { text: documents[2] } },
        { index: 0, relevance_score: 0, document: { text: documents[0] } },
      ],
      usage: { search_units: 1 },
    });
    expect(response.headers.get('x-model')).toBe('cohere/rerank-v3.5');
    expect(response.headers.get('x-provider')).toBe('cohere');
    const cents = centsFor([
      { item: 'search_units', quantity: 1, unitPriceNanosPerMillion: dollarsPerMillion('2000') },
    ]);
    expect(Number(response.headers.get('x-cost-cents'))).toBe(cents);
    const row = await world.usageOf(tag);
    expect(row).toMatchObject({ requests: 1, units: 1 });
    expect(row.cost_cents).toBeCloseTo(cents, 7);
  });

  it('keeps the top_n most relevant with Voyage, billed the tokens Voyage reports', async () => {
    const tag = freshTag('rerank-voyage');
    const response = await world.post(
      '/rerank',
      { model: 'voyageai/rerank-2.5', query, documents, top_n: 2 },
      { 'x-gw-tag': tag },
    );
    expect(response.status).toBe(200);
    const body: Json = await json(response);
    const reported = tokens(query) * documents.length + documents.reduce((sum, d) => sum + tokens(d), 0);
    expect(body.results.map((r: Json) => r.index)).toEqual([1, 2]);
    expect(body.usage).toEqual({ total_tokens: reported });
    expect(world.sims.voyage.requests.at(-1)?.body).toMatchObject({ model: 'rerank-2.5', top_k: 2 });
    const cents = centsFor([
      { item: 'input_tokens', quantity: reported, unitPriceNanosPerMillion: dollarsPerMillion('0.05') },
    ]);
    expect(Number(response.headers.get('x-cost-cents'))).toBe(cents);
    const row = await world.usageOf(tag);
    expect(row).toMatchObject({ requests: 1, units: reported });
    expect(row.cost_cents).toBeCloseTo(cents, 7);
  });

  it.each([
    ['a missing query', { documents }, "'query'"],
    ['documents of the wrong type', { query, documents: 'one document' }, "'documents'"],
    ['no documents', { query, documents: [] }, "'documents'"],
    ['a top_n that is not a positive integer', { query, documents, top_n: 0 }, "'top_n'"],
  ])('refuses %s with 400 naming the field', async (_, body, field) => {
    const response = await world.post('/rerank', body);
    expect(response.status).toBe(400);
    const error = (await json(response)).error;
    expect(error).toMatchObject({ type: 'invalid_request_error', code: 400 });
    expect(error.message).toContain(field);
  });

  it('refuses a chat model with 400 naming the chat endpoint', async () => {
    const response = await world.post('/rerank', { model: 'openai/gpt-4o', query, documents });
    expect(response.status).toBe(400);
    expect((await json(response)).error.message).toContain('/v1/chat/completions');
  });

  it('answers 404 model_not_found for an unknown model', async () => {
    const response = await world.post('/rerank', { model: 'cohere/rerank-v9', query, documents });
    expect(response.status).toBe(404);
    expect((await json(response)).error).toMatchObject({ type: 'model_not_found', code: 404 });
  });

  it('turns a provider 5xx into 502 provider_error and releases the hold', async () => {
    world.sims.cohere.script({ kind: 'error', status: 500 });
    const response = await world.post('/rerank', { model: 'cohere/rerank-v3.5', query, documents });
    expect(response.status).toBe(502);
    expect((await json(response)).error).toMatchObject({ type: 'provider_error', code: 502 });
    expect(await world.holdsOf(response.headers.get('x-request-id'))).toEqual(['failed']);
  });
});
