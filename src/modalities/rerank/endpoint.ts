import { SEARCH_UNIT_PRICES } from '../../catalog/extra-models.ts';
import type { CatalogModel } from '../../catalog/types.ts';
import type { RerankAdapter } from '../../contracts/modality.ts';
import { adapterFor } from '../../providers/registry.ts';
import type { EndpointSpec } from '../models.ts';

export const PREFERRED_RERANK_MODELS = ['cohere/rerank-v3.5', 'voyageai/rerank-2.5'];

export const rerankEndpoint: EndpointSpec<RerankAdapter> = {
  path: '/v1/rerank',
  modality: 'rerank',
  adapterOf: (model: CatalogModel) => adapterFor(model, 'rerank'),
  unpriced: (model: CatalogModel) =>
    SEARCH_UNIT_PRICES[model.id] === undefined && model.prices.inputNanosPerMillion === null
      ? 'has neither a per-search nor a per-token price, so it cannot be billed'
      : undefined,
};
