import type { CatalogModel } from '../catalog/types.ts';
import { jobModels } from '../jobs/models.ts';
import { audioModels } from './audio/models.ts';
import { detectionModels } from './detections/models.ts';
import { imageModels } from './images/models.ts';
import { translationModels } from './translations/models.ts';

/**
 * Models of the media endpoints (images, audio, video, 3D, translation, detection, OCR) that the price list does
 * not carry, each endpoint's list in its own folder. Add one spread per endpoint.
 */
export const endpointModels: readonly CatalogModel[] = [
  ...jobModels,
  ...imageModels,
  ...translationModels,
  ...detectionModels,
  ...audioModels,
];
