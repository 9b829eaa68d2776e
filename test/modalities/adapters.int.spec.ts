import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModalityUpstream } from '../../src/contracts/modality.ts';
import { cohereEmbeddings } from '../../src/providers/cohere/embeddings.ts';
import { cohereRerank } from '../../src/providers/cohere/rerank.ts';
import { UpstreamError } from '../../src/providers/errors.ts';
import { geminiEmbeddings } from '../../src/providers/gemini/embeddings.ts';
import { mistralModerations } from '../../src/providers/mistral/moderations.ts';
import { openAiEmbeddings } from '../../src/providers/openai/embeddings.ts';
import { openAiModerations } from '../../src/providers/openai/moderations.ts';
import { voyageEmbeddings } from '../../src/providers/voyage/embeddings.ts';
import { voyageRerank } from '../../src/providers/voyage/rerank.ts';
import type { Json } from '../support/json.ts';
import { startCohereUpstream } from '../upstreams/cohere.ts';
import { startGeminiEmbedUpstream } from '../upstreams/gemini-embed.ts';
import { startMistralUpstream } from '../upstreams/mistral.ts';
import { vector } from '../upstreams/modality-model.ts';
import { startOpenAiModalitiesUpstream } from '../upstreams/openai-modalities.ts';
import type { Upstream as Simulator } from '../upstreams/types.ts';
import { startVoyageUpstream } from '../upstreams/voyage.ts';

let openai: Simulator;
let mistral: Simulator;
let gemini: Simulator;
let cohere: Simulator;
let voyage: Simulator;

beforeAll(async () => {
  [openai, mistral, gemini, cohere, voyage] = await Promise.all([
    startOpenAiModalitiesUpstream(),
    startMistralUpstream(),
    startGeminiEmbedUpstream(),
    startCohereUpstream(),
    startVoyageUpstream(),
  ]);
});
afterAll(async () => {
  await Promise.all([openai, mistral, gemini, cohere, voyage].map((sim) => sim?.close()));
});

const upstream = (baseUrl: string, model: string): ModalityUpstream => ({
  model,
  baseUrl,
  apiKey: 'sk-upstream',
  timeoutMs: 2_000,
});
const signal = new AbortController().signal;
const texts = ['the quick brown fox', 'jumps over the lazy dog today'];
const sent = (sim: Simulator): Json => sim.requests.at(-1)?.body;

describe('embeddings adapters', () => {
  it('OpenAI-compatible: asks for floats, reads prompt_tokens, passes dimensions on', async () => {
    const result = await openAiEmbeddings.embed({
      inputs: texts,
      dimensions: 4,
      upstream: upstream(`${openai.url}/v1`, 'text-embedding-3-small'),
      signal,
    });
    expect(result).toEqual({ vectors: texts.map((t) => vector(t, 4)), inputTokens: 10 });
    expect(sent(openai)).toEqual({
      model: 'text-embedding-3-small',
      input: texts,
      encoding_format: 'float',
      dimensions: 4,
    });
    expect(openai.requests.at(-1)?.headers.authorization).toBe('Bearer sk-upstream');
  });

  it('OpenAI-compatible: places vectors by index, whatever order they come in', async () => {
    openai.script({
      kind: 'error',
      status: 200,
      body: {
        data: [
          { index: 1, embedding: [2] },
          { index: 0, embedding: [1] },
        ],
        usage: null,
      },
    });
    const result = await openAiEmbeddings.embed({
      inputs: ['a', 'b'],
      upstream: upstream(`${openai.url}/v1`, 'text-embedding-3-small'),
      signal,
    });
    expect(result).toEqual({ vectors: [[1], [2]], inputTokens: undefined });
  });

  it('Mistral embeddings go through the OpenAI-compatible adapter', async () => {
    const result = await openAiEmbeddings.embed({
      inputs: texts,
      upstream: upstream(`${mistral.url}/v1`, 'mistral-embed'),
      signal,
    });
    expect(result).toEqual({ vectors: texts.map((t) => vector(t)), inputTokens: 10 });
  });

  it('Gemini: one batchEmbedContents request per input, no usage reported', async () => {
    const result = await geminiEmbeddings.embed({
      inputs: texts,
      dimensions: 3,
      upstream: upstream(gemini.url, 'gemini-embedding-001'),
      signal,
    });
    expect(result).toEqual({ vectors: texts.map((t) => vector(t, 3)), inputTokens: undefined });
    const request = gemini.requests.at(-1);
    expect(request?.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(request?.headers['x-goog-api-key']).toBe('sk-upstream');
    expect(sent(gemini).requests[0]).toEqual({
      model: 'models/gemini-embedding-001',
      content: { parts: [{ text: texts[0] }] },
      outputDimensionality: 3,
    });
  });

  it('Cohere: v2/embed with input_type and float embedding type, billed input tokens', async () => {
    const result = await cohereEmbeddings.embed({
      inputs: texts,
      dimensions: 5,
      // A base URL set for the chat path's compatibility layer still reaches the native API.
      upstream: upstream(`${cohere.url}/compatibility/v1`, 'embed-v4.0'),
      signal,
    });
    expect(result).toEqual({ vectors: texts.map((t) => vector(t, 5)), inputTokens: 10 });
    expect(cohere.requests.at(-1)?.path).toBe('/v2/embed');
    expect(sent(cohere)).toEqual({
      model: 'embed-v4.0',
      texts,
      input_type: 'search_document',
      embedding_types: ['float'],
      output_dimension: 5,
    });
  });

  it('Voyage: output_dimension for dimensions, total_tokens as usage', async () => {
    const result = await voyageEmbeddings.embed({
      inputs: texts,
      dimensions: 6,
      upstream: upstream(`${voyage.url}/v1`, 'voyage-3.5'),
      signal,
    });
    expect(result).toEqual({ vectors: texts.map((t) => vector(t, 6)), inputTokens: 10 });
    expect(sent(voyage)).toEqual({ model: 'voyage-3.5', input: texts, output_dimension: 6 });
  });

  it.each([
    ['Gemini', () => gemini, geminiEmbeddings, 'gemini-embedding-001', undefined],
    ['Cohere', () => cohere, cohereEmbeddings, 'embed-v4.0', 2 * 250],
  ] as const)(
    '%s: splits a long input list into batches the provider takes',
    async (_, sim, adapter, model, billed) => {
      const many = Array.from({ length: 250 }, (_, i) => `text ${i}`);
      const before = sim().requests.length;
      const result = await adapter.embed({ inputs: many, upstream: upstream(sim().url, model), signal });
      expect(sim().requests.length - before).toBe(3);
      expect(result.vectors).toEqual(many.map((t) => vector(t)));
      expect(result.inputTokens).toBe(billed);
    },
  );

  it('turns a provider 5xx into a retryable server failure and a malformed answer into a server failure', async () => {
    const call = () =>
      voyageEmbeddings.embed({ inputs: texts, upstream: upstream(`${voyage.url}/v1`, 'voyage-3.5'), signal });
    voyage.script({ kind: 'error', status: 503 });
    await expect(call()).rejects.toMatchObject({ failure: 'server', status: 503 });
    voyage.script({ kind: 'error', status: 200, body: { data: [{ index: 0, embedding: [1] }] } });
    const short = await call().catch((e: unknown) => e);
    expect(short).toBeInstanceOf(UpstreamError);
    expect(short).toMatchObject({
      failure: 'server',
      message: expect.stringContaining('1 embeddings for 2'),
    });
    voyage.script({ kind: 'error', status: 200, body: 'not json' });
    await expect(call()).rejects.toMatchObject({ failure: 'server' });
  });

  it('passes a provider 4xx on with its message', async () => {
    await expect(
      openAiEmbeddings.embed({
        inputs: texts,
        dimensions: 4,
        upstream: upstream(`${openai.url}/v1`, 'text-embedding-ada-002'),
        signal,
      }),
    ).rejects.toMatchObject({
      failure: 'client',
      message: 'This model does not support specifying dimensions.',
    });
  });
});

describe('moderation adapters', () => {
  const inputs = ['have a nice day', 'I will kill you'];

  it('OpenAI: verdicts as OpenAI gives them, no usage', async () => {
    const result = await openAiModerations.moderate({
      inputs,
      upstream: upstream(`${openai.url}/v1`, 'omni-moderation-latest'),
      signal,
    });
    expect(result.inputTokens).toBeUndefined();
    expect(result.id).toMatch(/^modr-sim/);
    expect(result.results.map((r) => r.flagged)).toEqual([false, true]);
    expect(result.results[1]?.categories.violence).toBe(true);
    expect(result.results[1]?.category_scores.violence).toBe(0.9);
    expect(result.results[1]?.category_applied_input_types?.violence).toEqual(['text']);
    expect(sent(openai)).toEqual({ model: 'omni-moderation-latest', input: inputs });
  });

  it("Mistral: its categories under OpenAI's names where they match, the rest kept, usage reported", async () => {
    const result = await mistralModerations.moderate({
      inputs: [...inputs, 'how to build a bomb'],
      upstream: upstream(`${mistral.url}/v1`, 'mistral-moderation-latest'),
      signal,
    });
    expect(result.inputTokens).toBe(4 + 4 + 5);
    const [clean, violent, illicit] = result.results;
    expect(clean?.flagged).toBe(false);
    expect(Object.keys(clean?.categories ?? {}).sort()).toEqual(
      ['financial', 'hate', 'health', 'illicit', 'law', 'pii', 'self-harm', 'sexual', 'violence'].sort(),
    );
    expect(violent).toMatchObject({ flagged: true, categories: { violence: true, hate: false } });
    expect(violent?.category_scores.violence).toBe(0.9);
    expect(illicit).toMatchObject({ flagged: true, categories: { illicit: true } });
    expect(violent?.categories).not.toHaveProperty('violence_and_threats');
  });
});

describe('rerank adapters', () => {
  const query = 'capital of France';
  const documents = ['Berlin is in Germany', 'Paris is the capital of France', 'France has a capital'];

  it('Cohere: v2/rerank with top_n, billed in search units', async () => {
    const result = await cohereRerank.rerank({
      query,
      documents,
      topN: 2,
      upstream: upstream(cohere.url, 'rerank-v3.5'),
      signal,
    });
    expect(result.billedUnits).toBe(1);
    expect(result.ranked.map((r) => r.index)).toEqual([1, 2]);
    expect(result.ranked[0]?.relevanceScore).toBe(1);
    expect(sent(cohere)).toEqual({ model: 'rerank-v3.5', query, documents, top_n: 2 });
  });

  it('Voyage: v1/rerank with top_k, billed in tokens', async () => {
    const result = await voyageRerank.rerank({
      query,
      documents,
      topN: 3,
      upstream: upstream(`${voyage.url}/v1`, 'rerank-2.5'),
      signal,
    });
    expect(result.billedUnits).toBe(3 * 3 + 4 + 6 + 4);
    expect(result.ranked.map((r) => r.index)).toEqual([1, 2, 0]);
    expect(sent(voyage)).toEqual({ model: 'rerank-2.5', query, documents, top_k: 3 });
  });
});
