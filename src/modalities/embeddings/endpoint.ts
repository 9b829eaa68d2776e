import type { CatalogModel } from '../../catalog/types.ts';
import { cohereEmbeddings } from '../../providers/cohere/embeddings.ts';
import { geminiEmbeddings } from '../../providers/gemini/embeddings.ts';
import { openAiEmbeddings } from '../../providers/openai/embeddings.ts';
import { voyageEmbeddings } from '../../providers/voyage/embeddings.ts';
import type { EndpointSpec } from '../models.ts';
import type { EmbeddingsAdapter } from '../types.ts';

/** Providers with an embeddings API of their own; the rest of the OpenAI-compatible crowd share OpenAI's. */
const NATIVE: Readonly<Record<string, EmbeddingsAdapter>> = {
  cohere: cohereEmbeddings,
  voyageai: voyageEmbeddings,
  google: geminiEmbeddings,
};

export const embeddingsEndpoint: EndpointSpec<EmbeddingsAdapter> = {
  path: '/v1/embeddings',
  modality: 'embedding',
  adapterOf: (model: CatalogModel) =>
    NATIVE[model.provider] ?? (model.api === 'openai' ? openAiEmbeddings : undefined),
  unpriced: (model: CatalogModel) =>
    model.prices.inputNanosPerMillion === null ? 'has no per-token price, so it cannot be billed' : undefined,
};
