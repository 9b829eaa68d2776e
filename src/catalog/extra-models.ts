import { dollarsPerMillion } from '../contracts/money.ts';
import type { CapabilityId } from './capabilities.ts';
import { endpointModels } from './endpoint-models.ts';
import type { Catalog, CatalogModel, Modality } from './types.ts';

/**
 * Moderation and rerank models the price list (genai-prices) does not carry, priced from each provider's published
 * price page. Without them the catalog has no Cohere or Voyage reranker, no Mistral moderation model, and OpenAI's
 * moderation only as the family entry `openai/moderation`. The catalog is consulted first, so a model the price
 * list gains later is priced from there.
 */
interface Extra {
  id: string;
  modality: 'moderation' | 'rerank';
  /** Dollars per million tokens; '0' for a free model. */
  perMillionTokens: string | null;
  description: string;
  note: string;
}

const EXTRAS: readonly Extra[] = [
  {
    id: 'openai/omni-moderation-latest',
    modality: 'moderation',
    perMillionTokens: '0',
    description: "OpenAI's multimodal moderation model",
    note: 'free (https://platform.openai.com/docs/guides/moderation)',
  },
  {
    id: 'mistral/mistral-moderation-latest',
    modality: 'moderation',
    perMillionTokens: '0.1',
    description: "Mistral's moderation classifier",
    note: '$0.10 per million tokens (https://mistral.ai/pricing#api-pricing)',
  },
  ...['rerank-v3.5', 'rerank-english-v3.0', 'rerank-multilingual-v3.0'].map(
    (name): Extra => ({
      id: `cohere/${name}`,
      modality: 'rerank',
      perMillionTokens: null,
      description: 'Cohere reranker, billed per search unit',
      note: '$2.00 per 1,000 search units (https://cohere.com/pricing); not a per-token rate',
    }),
  ),
  ...(
    [
      ['rerank-2.5', '0.05'],
      ['rerank-2.5-lite', '0.02'],
      ['rerank-2', '0.05'],
      ['rerank-2-lite', '0.02'],
    ] as const
  ).map(
    ([name, price]): Extra => ({
      id: `voyageai/${name}`,
      modality: 'rerank',
      perMillionTokens: price,
      description: 'Voyage AI reranker, billed per token',
      note: `$${price} per million tokens (https://docs.voyageai.com/docs/pricing)`,
    }),
  ),
];

/** Nano-dollars per million search units, for rerankers billed per search (Cohere's $2 per 1,000). */
export const SEARCH_UNIT_PRICES: Readonly<Record<string, bigint>> = {
  'cohere/rerank-v3.5': dollarsPerMillion('2000'),
  'cohere/rerank-english-v3.0': dollarsPerMillion('2000'),
  'cohere/rerank-multilingual-v3.0': dollarsPerMillion('2000'),
};

/** Price-list entries that name a family rather than a model one can call, and the model to call for them. */
const CALLABLE_IDS: Readonly<Record<string, string>> = { 'openai/moderation': 'omni-moderation-latest' };

const CAPABILITY: Record<Extra['modality'], CapabilityId> = { moderation: 'moderation', rerank: 'rerank' };

function catalogModel(extra: Extra): CatalogModel {
  const slash = extra.id.indexOf('/');
  const name = extra.id.slice(slash + 1);
  return {
    id: extra.id,
    provider: extra.id.slice(0, slash),
    providerModelId: name,
    name,
    api: 'openai',
    modality: extra.modality,
    contextWindow: null,
    maxOutputTokens: null,
    prices: {
      inputNanosPerMillion:
        extra.perMillionTokens === null ? null : dollarsPerMillion(extra.perMillionTokens),
      outputNanosPerMillion: null,
      cachedInputNanosPerMillion: null,
      cacheWriteNanosPerMillion: null,
    },
    priceNotes: [extra.note],
    capabilities: [CAPABILITY[extra.modality]],
    quirks: { reasoning: false, noSampling: false, nativeFormat: null, maxTokensField: 'max_tokens' },
    deprecated: false,
    description: extra.description,
  };
}

/** The models above as catalog entries, for a catalog that wants to list them too. */
export const extraCatalogModels: readonly CatalogModel[] = [...EXTRAS.map(catalogModel), ...endpointModels];
const byLowerId = new Map(extraCatalogModels.map((m) => [m.id.toLowerCase(), m]));

export function findModel(catalog: Catalog, id: string): CatalogModel | undefined {
  return catalog.get(id) ?? byLowerId.get(id.toLowerCase());
}

/** The catalog's models of a modality, then the extras it does not have. */
export function modelsOf(catalog: Catalog, modality: Modality): CatalogModel[] {
  const listed = catalog.list({ modality });
  const known = new Set(listed.map((m) => m.id.toLowerCase()));
  return [
    ...listed,
    ...extraCatalogModels.filter((m) => m.modality === modality && !known.has(m.id.toLowerCase())),
  ];
}

export function callableModelId(model: CatalogModel): string {
  return CALLABLE_IDS[model.id] ?? model.providerModelId;
}
