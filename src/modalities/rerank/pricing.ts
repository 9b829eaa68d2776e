import { SEARCH_UNIT_PRICES } from '../../catalog/extra-models.ts';
import type { CatalogModel } from '../../catalog/types.ts';
import { RequestRefused } from '../../contracts/errors.ts';
import type { RerankAdapter, RerankUnit } from '../../contracts/modality.ts';
import { countTextsAsync } from '../../tokens/count.ts';
import { worstCaseTokens } from '../estimate.ts';

export interface RerankPricing {
  unit: RerankUnit;
  item: 'search_units' | 'input_tokens';
  unitPriceNanosPerMillion: bigint;
  /** The gateway's own count of the unit, used when the provider reports none. */
  counted: number;
  /** The most the call can be billed in the unit. */
  worst: number;
}

/** Cohere's billing rule: a search unit is one query over up to 100 documents. */
const DOCUMENTS_PER_SEARCH_UNIT = 100;
/**
 * Cohere's pricing page splits a document longer than 500 tokens (query included) into chunks that each count as a
 * document. Its v2 API truncates long documents instead, but the gateway counts by the older, costlier rule: an
 * estimate that never comes out below what Cohere bills.
 */
const TOKENS_PER_CHUNK = 500;

function searchUnits(
  queryTokens: number,
  documentTokens: number[],
  scale: (tokens: number) => number,
): number {
  const chunks = documentTokens.reduce(
    (sum, tokens) => sum + Math.max(1, Math.ceil(scale(queryTokens + tokens) / TOKENS_PER_CHUNK)),
    0,
  );
  return Math.ceil(chunks / DOCUMENTS_PER_SEARCH_UNIT);
}

/**
 * How a rerank call is billed: per search unit when the provider bills so and a per-search price is known, else per
 * token at the input price. Tokens are counted as Voyage counts them: the query once per document, plus every
 * document (https://docs.voyageai.com/docs/faq#what-is-the-total-number-of-tokens-for-the-rerankers).
 */
export async function rerankPricing(
  model: CatalogModel,
  adapter: RerankAdapter,
  query: string,
  documents: readonly string[],
): Promise<RerankPricing> {
  const [queryTokens = 0, ...documentTokens] = await countTextsAsync([query, ...documents]);
  const perSearch = SEARCH_UNIT_PRICES[model.id];
  if (adapter.unit === 'search_units' && perSearch !== undefined) {
    return {
      unit: 'search_units',
      item: 'search_units',
      unitPriceNanosPerMillion: perSearch,
      counted: searchUnits(queryTokens, documentTokens, (t) => t),
      worst: searchUnits(queryTokens, documentTokens, (t) => worstCaseTokens(t, 1)),
    };
  }
  const perToken = model.prices.inputNanosPerMillion;
  if (perToken === null) {
    throw new RequestRefused('invalid', `'model': ${model.id} has no per-token price to bill by`);
  }
  const counted = queryTokens * documents.length + documentTokens.reduce((sum, t) => sum + t, 0);
  return {
    unit: 'tokens',
    item: 'input_tokens',
    unitPriceNanosPerMillion: perToken,
    counted,
    worst: worstCaseTokens(counted, documents.length),
  };
}
