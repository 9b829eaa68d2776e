import type { CatalogModel } from '../../catalog/types.ts';
import type { EmbeddingsAdapter } from '../../contracts/modality.ts';
import { adapterFor } from '../../providers/registry.ts';
import type { EndpointSpec } from '../models.ts';

export const embeddingsEndpoint: EndpointSpec<EmbeddingsAdapter> = {
  path: '/v1/embeddings',
  modality: 'embedding',
  adapterOf: (model: CatalogModel) => adapterFor(model, 'embeddings'),
  unpriced: (model: CatalogModel) =>
    model.prices.inputNanosPerMillion === null ? 'has no per-token price, so it cannot be billed' : undefined,
};
