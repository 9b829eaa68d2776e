import type { CatalogModel } from '../../catalog/types.ts';
import { visionObjects } from '../../providers/google-vision/objects.ts';
import type { EndpointSpec } from '../models.ts';
import type { DetectionAdapter } from './types.ts';

const ADAPTERS: Readonly<Record<string, DetectionAdapter>> = { 'google-vision': visionObjects };

export const detectionEndpoint: EndpointSpec<DetectionAdapter> = {
  path: '/v1/detections',
  modality: 'object-detection',
  adapterOf: (model: CatalogModel) => ADAPTERS[model.provider],
  unpriced: (model: CatalogModel) =>
    model.prices.perUnitNanos?.image === undefined
      ? 'has no per-image price, so it cannot be billed'
      : undefined,
};

export const PREFERRED_DETECTION_MODELS = ['google-vision/object-localization'];
