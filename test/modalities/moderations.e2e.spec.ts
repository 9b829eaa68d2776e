import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dollarsPerMillion } from '../../src/contracts/money.ts';
import { countTextTokens } from '../../src/tokens/count.ts';
import { type Json, json } from '../support/json.ts';
import { tokens } from '../upstreams/modality-model.ts';
import { centsFor, freshTag, type ModalityWorld, startModalityWorld } from './support.ts';

const inputs = ['have a nice day', 'I will kill you'];

let world: ModalityWorld;
beforeAll(async () => {
  world = await startModalityWorld();
});
afterAll(async () => {
  await world?.close();
});

describe('POST /v1/moderations', () => {
  it('uses omni-moderation-latest when no model is named, free, and counts its tokens as estimated', async () => {
    const tag = freshTag('moderate');
    const { data, response } = await world.client.moderations
      .create({ input: inputs }, { headers: { 'x-gw-tag': tag } })
      .withResponse();
    expect(data.model).toBe('openai/omni-moderation-latest');
    expect(data.id).toMatch(/^modr-/);
    expect(data.results.map((r) => r.flagged)).toEqual([false, true]);
    expect(data.results[1]?.categories.violence).toBe(true);
    expect(data.results[1]?.category_scores.violence).toBe(0.9);
    expect(response.headers.get('x-model')).toBe('openai/omni-moderation-latest');
    expect(response.headers.get('x-provider')).toBe('openai');
    expect(Number(response.headers.get('x-cost-cents'))).toBe(0);
    const sent: Json = world.sims.openai.requests.at(-1)?.body;
    expect(sent).toEqual({ model: 'omni-moderation-latest', input: inputs });
    const row = await world.usageOf(tag);
    expect(row).toMatchObject({ requests: 1, cost_cents: 0 });
    expect(row.units).toBe(inputs.reduce((sum, t) => sum + countTextTokens(t), 0));
  });

  it("maps Mistral's categories to OpenAI's and bills the tokens Mistral reports", async () => {
    const tag = freshTag('moderate-mistral');
    const { data, response } = await world.client.moderations
      .create({ model: 'mistral/mistral-moderation-latest', input: inputs }, { headers: { 'x-gw-tag': tag } })
      .withResponse();
    expect(data.model).toBe('mistral/mistral-moderation-latest');
    expect(data.results[1]).toMatchObject({
      flagged: true,
      categories: { violence: true, hate: false, pii: false },
    });
    expect(data.results[1]?.categories).not.toHaveProperty('violence_and_threats');
    const reported = inputs.reduce((sum, t) => sum + tokens(t), 0);
    const cents = centsFor([
      { item: 'input_tokens', quantity: reported, unitPriceNanosPerMillion: dollarsPerMillion('0.1') },
    ]);
    expect(Number(response.headers.get('x-cost-cents'))).toBe(cents);
    const row = await world.usageOf(tag);
    expect(row).toMatchObject({ requests: 1, units: reported });
    expect(row.cost_cents).toBeCloseTo(cents, 7);
  });

  it('takes a single string', async () => {
    const data = await world.client.moderations.create({ model: 'openai/moderation', input: 'hate speech' });
    expect(data.results).toHaveLength(1);
    expect(data.results[0]?.categories.hate).toBe(true);
  });

  it.each([
    ['a missing input', {}, "'input'"],
    ['an input of the wrong type', { input: { text: 'x' } }, "'input'"],
    ['a model of the wrong type', { input: 'x', model: 7 }, "'model'"],
  ])('refuses %s with 400 naming the field', async (_, body, field) => {
    const response = await world.post('/moderations', body);
    expect(response.status).toBe(400);
    const error = (await json(response)).error;
    expect(error).toMatchObject({ type: 'invalid_request_error', code: 400 });
    expect(error.message).toContain(field);
  });

  it('refuses an embedding model with 400 naming the embeddings endpoint', async () => {
    await expect(
      world.client.moderations.create({ model: 'openai/text-embedding-3-small', input: 'x' }),
    ).rejects.toMatchObject({ status: 400, error: { message: expect.stringContaining('/v1/embeddings') } });
  });

  it('answers 404 model_not_found for an unknown model', async () => {
    await expect(
      world.client.moderations.create({ model: 'openai/omni-moderation-9', input: 'x' }),
    ).rejects.toMatchObject({ status: 404, error: { type: 'model_not_found' } });
  });

  it('turns a provider 5xx into 502 provider_error and releases the hold', async () => {
    world.sims.mistral.script({ kind: 'error', status: 503 });
    const failure = await world.client.moderations
      .create({ model: 'mistral/mistral-moderation-latest', input: 'x' })
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ status: 502, error: { type: 'provider_error' } });
    const requestId = (failure as { headers: Headers }).headers.get('x-request-id');
    expect(await world.holdsOf(requestId)).toEqual(['failed']);
  });
});
