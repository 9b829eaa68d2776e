import { audioModels } from './per-unit/audio.ts';
import { detectionModels } from './per-unit/detections.ts';
import { imageModels } from './per-unit/images.ts';
import { jobModels } from './per-unit/jobs.ts';
import { translationModels } from './per-unit/translations.ts';
import type { CatalogModel } from './types.ts';

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
