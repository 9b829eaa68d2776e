import type { CatalogModel } from '../catalog/types.ts';

/**
 * Models of the media endpoints (images, audio, video, 3D, translation, detection, OCR) that the price list does
 * not carry, each endpoint's list in its own folder. Add one spread per endpoint.
 */
export const endpointModels: readonly CatalogModel[] = [];
