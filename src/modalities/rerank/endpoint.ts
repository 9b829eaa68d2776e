import type { CatalogModel } from '../../catalog/types.ts';
import { cohereRerank } from '../../providers/cohere/rerank.ts';
import { voyageRerank } from '../../providers/voyage/rerank.ts';
import { SEARCH_UNIT_PRICES } from '../extra-models.ts';
import type { EndpointSpec } from '../models.ts';
import type { RerankAdapter } from '../types.ts';

const ADAPTERS: Readonly<Record<string, RerankAdapter>> = {
  cohere: cohereRerank,
  voyageai: voyageRerank,
};

export const PREFERRED_RERANK_MODELS = ['cohere/rerank-v3.5', 'voyageai/rerank-2.5'];

export const rerankEndpoint: EndpointSpec<RerankAdapter> = {
  path: '/v1/rerank',
  modality: 'rerank',
  adapterOf: (model: CatalogModel) => ADAPTERS[model.provider],
  unpriced: (model: CatalogModel) =>
    SEARCH_UNIT_PRICES[model.id] === undefined && model.prices.inputNanosPerMillion === null
      ? 'has neither a per-search nor a per-token price, so it cannot be billed'
      : undefined,
};
