import { describe, expect, it } from 'vitest';
import { findModel } from '../../src/catalog/extra-models.ts';
import { buildCatalog } from '../../src/catalog/index.ts';
import { RequestRefused } from '../../src/contracts/errors.ts';
import { describeError } from '../../src/http/errors.ts';
import { embeddingsEndpoint } from '../../src/modalities/embeddings/endpoint.ts';
import { defaultModelId, resolveModalityModel } from '../../src/modalities/models.ts';
import {
  moderationsEndpoint,
  PREFERRED_MODERATION_MODELS,
} from '../../src/modalities/moderations/endpoint.ts';
import { PREFERRED_RERANK_MODELS, rerankEndpoint } from '../../src/modalities/rerank/endpoint.ts';
import { cohereEmbeddings } from '../../src/providers/cohere/embeddings.ts';
import { geminiEmbeddings } from '../../src/providers/gemini/embeddings.ts';
import { openAiEmbeddings } from '../../src/providers/openai/embeddings.ts';
import { voyageEmbeddings } from '../../src/providers/voyage/embeddings.ts';

const catalog = buildCatalog();
const env = {
  OPENAI_API_KEY: 'k',
  MISTRAL_API_KEY: 'k',
  GEMINI_API_KEY: 'k',
  COHERE_API_KEY: 'k',
  VOYAGEAI_API_KEY: 'k',
};
const source = (e: NodeJS.ProcessEnv = env) => ({ catalog, env: e, timeoutMs: 1000 });

/** A refusal as the API answers it. */
const refusal = (run: () => unknown): { status: number; type: string; message: string } => {
  try {
    run();
  } catch (error) {
    if (error instanceof RequestRefused) {
      const { status, body } = describeError(error);
      return { status, type: body.error.type, message: body.error.message };
    }
    throw error;
  }
  throw new Error('expected a refusal');
};

describe('which model serves an endpoint', () => {
  it('picks the adapter by provider, the OpenAI-compatible one for the rest', () => {
    const adapter = (id: string) => resolveModalityModel(source(), embeddingsEndpoint, id).adapter;
    expect(adapter('openai/text-embedding-3-small')).toBe(openAiEmbeddings);
    expect(adapter('mistral/mistral-embed')).toBe(openAiEmbeddings);
    expect(adapter('google/gemini-embedding-001')).toBe(geminiEmbeddings);
    expect(adapter('cohere/embed-v4.0')).toBe(cohereEmbeddings);
    expect(adapter('voyageai/voyage-3.5')).toBe(voyageEmbeddings);
  });

  it('reaches Cohere and Voyage at their native APIs unless a base URL is set', () => {
    const upstream = (id: string, e?: NodeJS.ProcessEnv) =>
      resolveModalityModel(source(e), embeddingsEndpoint, id).upstream;
    expect(upstream('cohere/embed-v4.0').baseUrl).toBe('https://api.cohere.com');
    expect(upstream('voyageai/voyage-3.5').baseUrl).toBe('https://api.voyageai.com/v1');
    expect(upstream('mistral/mistral-embed').baseUrl).toBe('https://api.mistral.ai/v1');
    expect(upstream('cohere/embed-v4.0', { ...env, COHERE_BASE_URL: 'http://sim' }).baseUrl).toBe(
      'http://sim',
    );
  });

  it('answers 404 model_not_found for an unknown model', () => {
    const error = refusal(() => resolveModalityModel(source(), embeddingsEndpoint, 'openai/nope'));
    expect(error).toMatchObject({ status: 404, type: 'model_not_found' });
  });

  it('refuses a model of another modality with 400 naming the endpoint that serves it', () => {
    const chat = refusal(() => resolveModalityModel(source(), embeddingsEndpoint, 'openai/gpt-4o'));
    expect(chat).toMatchObject({ status: 400, type: 'invalid_request_error' });
    expect(chat.message).toContain('POST /v1/chat/completions');
    expect(chat.message).toContain('not an embedding model');
    const embedding = refusal(() =>
      resolveModalityModel(source(), rerankEndpoint, 'openai/text-embedding-3-small'),
    );
    expect(embedding.message).toContain('POST /v1/embeddings');
    const moderation = refusal(() =>
      resolveModalityModel(source(), embeddingsEndpoint, 'openai/omni-moderation-latest'),
    );
    expect(moderation.message).toContain('POST /v1/moderations');
  });

  it('names the key to set for a provider that is not configured, and says when no adapter exists', () => {
    const missing = refusal(() =>
      resolveModalityModel(source({}), embeddingsEndpoint, 'voyageai/voyage-3.5'),
    );
    expect(missing.message).toContain('VOYAGEAI_API_KEY');
    const together = refusal(() =>
      resolveModalityModel(
        source({ TOGETHER_API_KEY: 'k' }),
        moderationsEndpoint,
        'together/togethercomputer/GPT-JT-Moderation-6B',
      ),
    );
    expect(together.message).toContain('no adapter');
  });

  it('calls the price list family entry openai/moderation as omni-moderation-latest', () => {
    const target = resolveModalityModel(source(), moderationsEndpoint, 'openai/moderation');
    expect(target.upstream.model).toBe('omni-moderation-latest');
  });
});

describe('models the price list lacks', () => {
  it('are found, priced, and of the right modality', () => {
    expect(findModel(catalog, 'mistral/mistral-moderation-latest')).toMatchObject({
      modality: 'moderation',
      prices: { inputNanosPerMillion: 100_000_000n },
    });
    expect(findModel(catalog, 'openai/omni-moderation-latest')?.prices.inputNanosPerMillion).toBe(0n);
    expect(findModel(catalog, 'voyageai/rerank-2.5')?.prices.inputNanosPerMillion).toBe(50_000_000n);
    expect(findModel(catalog, 'Cohere/Rerank-v3.5')?.modality).toBe('rerank');
  });
});

describe('default models', () => {
  it('moderation prefers omni-moderation-latest, else the first reachable one', () => {
    expect(defaultModelId(source(), moderationsEndpoint, PREFERRED_MODERATION_MODELS)).toBe(
      'openai/omni-moderation-latest',
    );
    expect(
      defaultModelId(source({ MISTRAL_API_KEY: 'k' }), moderationsEndpoint, PREFERRED_MODERATION_MODELS),
    ).toBe('mistral/mistral-moderation-latest');
  });

  it('rerank prefers Cohere, then Voyage', () => {
    expect(defaultModelId(source(), rerankEndpoint, PREFERRED_RERANK_MODELS)).toBe('cohere/rerank-v3.5');
    expect(defaultModelId(source({ VOYAGEAI_API_KEY: 'k' }), rerankEndpoint, PREFERRED_RERANK_MODELS)).toBe(
      'voyageai/rerank-2.5',
    );
  });

  it('refuses with 400 when no model of the modality can be reached', () => {
    const error = refusal(() => defaultModelId(source({}), rerankEndpoint, PREFERRED_RERANK_MODELS));
    expect(error).toMatchObject({ status: 400, message: expect.stringContaining('no rerank model') });
  });
});

describe('availability for the model list', () => {
  it('follows the endpoint of the model’s modality, and leaves chat models to the chat registry', async () => {
    const { isModalityAvailable } = await import('../../src/modalities/availability.ts');
    const model = (id: string) => findModel(catalog, id) as NonNullable<ReturnType<typeof findModel>>;
    expect(isModalityAvailable(model('voyageai/voyage-3.5'), env)).toBe(true);
    expect(isModalityAvailable(model('voyageai/voyage-3.5'), {})).toBe(false);
    expect(
      isModalityAvailable(model('cloudflare/@cf/baai/bge-reranker-base'), { CLOUDFLARE_API_KEY: 'k' }),
    ).toBe(false);
    expect(isModalityAvailable(model('openai/gpt-4o'), env)).toBeUndefined();
  });
});
