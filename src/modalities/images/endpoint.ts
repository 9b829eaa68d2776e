import type { CatalogModel } from '../../catalog/types.ts';
import type { ImagesAdapter } from '../../contracts/images.ts';
import { adapterFor } from '../../providers/registry.ts';
import type { EndpointSpec } from '../models.ts';
import { hasImagePrice } from './pricing.ts';
import { rulesOf } from './rules.ts';

/** When `model` is left out: OpenAI's current image model, then the others this gateway can reach. */
export const PREFERRED_GENERATION_MODELS = [
  'openai/gpt-image-1',
  'openai/dall-e-3',
  'stability/stable-image-core',
];
export const PREFERRED_EDIT_MODELS = [
  'openai/gpt-image-1',
  'openai/dall-e-2',
  'stability/stable-image-inpaint',
];

/** An adapter only for models whose options the gateway knows how to check and price. */
const imagesAdapter = (model: CatalogModel) => (rulesOf(model) ? adapterFor(model, 'images') : undefined);

const unpriced = (model: CatalogModel) =>
  hasImagePrice(model) ? undefined : 'has no per-image price, so it cannot be billed';

export const generationsEndpoint: EndpointSpec<ImagesAdapter> = {
  path: '/v1/images/generations',
  modality: 'image',
  adapterOf: (model) =>
    model.capabilities.includes('image-generation') && imagesAdapter(model)?.generate
      ? imagesAdapter(model)
      : undefined,
  unpriced,
};

export const editsEndpoint: EndpointSpec<ImagesAdapter> = {
  path: '/v1/images/edits',
  modality: 'image',
  adapterOf: (model) =>
    model.capabilities.includes('image-editing') && imagesAdapter(model)?.edit
      ? imagesAdapter(model)
      : undefined,
  unpriced,
};

/** For a model list's `available`: served by either images endpoint. */
export const imagesEndpoint: EndpointSpec<ImagesAdapter> = {
  path: '/v1/images/generations',
  modality: 'image',
  adapterOf: (model) => generationsEndpoint.adapterOf(model) ?? editsEndpoint.adapterOf(model),
  unpriced,
};
