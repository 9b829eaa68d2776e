import { dollarsPerMillion } from '../contracts/money.ts';
import { localMediaModels } from './local-media.ts';
import type { CatalogModel } from './types.ts';

export interface ChatModel {
  /** `<provider>/<model>` */
  id: string;
  provider: string;
  inputNanosPerMillion: bigint;
  outputNanosPerMillion: bigint;
  contextWindow: number;
  maxOutputTokens: number;
  /** Shown in the catalog: this model answers without any upstream. */
  description: string;
}

/**
 * The built-in `local` provider: deterministic echo models that need no key and no network, priced like hosted
 * models (a small one and a large one) so that charges, caps and budgets behave as they would upstream.
 */
export const localChatModels: readonly ChatModel[] = [
  {
    id: 'local/echo',
    provider: 'local',
    inputNanosPerMillion: dollarsPerMillion('0.15'),
    outputNanosPerMillion: dollarsPerMillion('0.60'),
    contextWindow: 128_000,
    maxOutputTokens: 16_384,
    description: 'Built-in echo model (replies with the last user message), priced like a small hosted model',
  },
  {
    id: 'local/echo-pro',
    provider: 'local',
    inputNanosPerMillion: dollarsPerMillion('3'),
    outputNanosPerMillion: dollarsPerMillion('15'),
    contextWindow: 200_000,
    maxOutputTokens: 8_192,
    description: 'Built-in echo model priced like a large hosted model',
  },
];

export function findChatModel(id: string): ChatModel | undefined {
  return localChatModels.find((m) => m.id === id);
}

const LOCAL_QUIRKS = {
  reasoning: false,
  noSampling: false,
  nativeFormat: null,
  maxTokensField: 'max_tokens',
} as const;

/**
 * Built-in models of the other endpoints, so that embeddings and moderations can be tried with no key too: a
 * lexical hashed-n-gram embedding (src/providers/local/embeddings.ts), priced like a small hosted embedding model,
 * and keyword-rule moderation (src/providers/local/moderations.ts), free like OpenAI's.
 */
const localOtherModels: CatalogModel[] = [
  {
    id: 'local/embed',
    provider: 'local',
    providerModelId: 'embed',
    name: 'embed',
    api: 'local',
    modality: 'embedding',
    contextWindow: 8192,
    maxOutputTokens: null,
    prices: {
      inputNanosPerMillion: dollarsPerMillion('0.02'),
      outputNanosPerMillion: null,
      cachedInputNanosPerMillion: null,
      cacheWriteNanosPerMillion: null,
    },
    priceNotes: [],
    capabilities: ['embeddings'],
    quirks: LOCAL_QUIRKS,
    deprecated: false,
    description:
      'Built-in lexical embedding (hashed character n-grams, 1536 dimensions): deterministic, no key; texts that share spelling are close, synonyms are not',
  },
  {
    id: 'local/moderation',
    provider: 'local',
    providerModelId: 'moderation',
    name: 'moderation',
    api: 'local',
    modality: 'moderation',
    contextWindow: null,
    maxOutputTokens: null,
    prices: {
      inputNanosPerMillion: 0n,
      outputNanosPerMillion: null,
      cachedInputNanosPerMillion: null,
      cacheWriteNanosPerMillion: null,
    },
    priceNotes: [],
    capabilities: ['moderation'],
    quirks: LOCAL_QUIRKS,
    deprecated: false,
    description:
      "Built-in keyword-rule moderation in OpenAI's categories: no key, free; a word list, not a classifier",
  },
];

/**
 * The local models as catalog entries: always available, streamed word by word; a forced tool call and a JSON
 * response format are answered in shape (src/providers/local/shaped.ts). The media test models are in
 * local-media.ts.
 */
export function localCatalogModels(): CatalogModel[] {
  return [...localChatModels.map(localChatEntry), ...localOtherModels, ...localMediaModels];
}

function localChatEntry(m: ChatModel): CatalogModel {
  return {
    id: m.id,
    provider: m.provider,
    providerModelId: m.id.slice(m.provider.length + 1),
    name: m.id.slice(m.provider.length + 1),
    api: 'local',
    modality: 'text',
    contextWindow: m.contextWindow,
    maxOutputTokens: m.maxOutputTokens,
    prices: {
      inputNanosPerMillion: m.inputNanosPerMillion,
      outputNanosPerMillion: m.outputNanosPerMillion,
      cachedInputNanosPerMillion: null,
      cacheWriteNanosPerMillion: null,
    },
    priceNotes: [],
    capabilities: ['chat', 'streaming', 'function_calling', 'json_mode'],
    quirks: LOCAL_QUIRKS,
    deprecated: false,
    description: m.description,
  };
}
