import type { CatalogModel } from '../../catalog/types.ts';
import { mistralModerations } from '../../providers/mistral/moderations.ts';
import { openAiModerations } from '../../providers/openai/moderations.ts';
import type { EndpointSpec } from '../models.ts';
import type { ModerationsAdapter } from '../types.ts';

const ADAPTERS: Readonly<Record<string, ModerationsAdapter>> = {
  openai: openAiModerations,
  mistral: mistralModerations,
};

/** Used when a request names no model, as long as it is reachable; else the first reachable one. */
export const PREFERRED_MODERATION_MODELS = ['openai/omni-moderation-latest'];

/**
 * A moderation model without a price is billed at zero: the price list leaves OpenAI's moderation unpriced
 * because OpenAI does not charge for it, and the ledger holds and settles a free call at zero.
 */
export const moderationsEndpoint: EndpointSpec<ModerationsAdapter> = {
  path: '/v1/moderations',
  modality: 'moderation',
  adapterOf: (model: CatalogModel) => ADAPTERS[model.provider],
  unpriced: () => undefined,
};
