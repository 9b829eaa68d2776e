import type { CatalogModel } from '../../catalog/types.ts';
import type { ModerationsAdapter } from '../../contracts/modality.ts';
import { adapterFor } from '../../providers/registry.ts';
import type { EndpointSpec } from '../models.ts';

/** Used when a request names no model, as long as it is reachable; else the first reachable one. */
export const PREFERRED_MODERATION_MODELS = ['openai/omni-moderation-latest'];

/**
 * A moderation model without a price is billed at zero: the price list leaves OpenAI's moderation unpriced
 * because OpenAI does not charge for it, and the ledger holds and settles a free call at zero.
 */
export const moderationsEndpoint: EndpointSpec<ModerationsAdapter> = {
  path: '/v1/moderations',
  modality: 'moderation',
  adapterOf: (model: CatalogModel) => adapterFor(model, 'moderations'),
  unpriced: () => undefined,
};
