import type { CatalogModel } from '../../catalog/types.ts';
import type { DetectionAdapter } from '../../contracts/detections.ts';
import { adapterFor } from '../../providers/registry.ts';
import type { EndpointSpec } from '../models.ts';

export const detectionEndpoint: EndpointSpec<DetectionAdapter> = {
  path: '/v1/detections',
  modality: 'object-detection',
  adapterOf: (model: CatalogModel) => adapterFor(model, 'detections'),
  unpriced: (model: CatalogModel) =>
    model.prices.perUnitNanos?.image === undefined
      ? 'has no per-image price, so it cannot be billed'
      : undefined,
};

export const PREFERRED_DETECTION_MODELS = ['google-vision/object-localization'];
