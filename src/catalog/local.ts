import { dollarsPerMillion } from '../contracts/money.ts';
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

/** The local models as catalog entries: always available, streamed word by word, no tools. */
export function localCatalogModels(): CatalogModel[] {
  return localChatModels.map((m) => ({
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
    capabilities: ['chat', 'streaming'],
    quirks: { reasoning: false, noSampling: false, nativeFormat: null, maxTokensField: 'max_tokens' },
    deprecated: false,
    description: m.description,
  }));
}
