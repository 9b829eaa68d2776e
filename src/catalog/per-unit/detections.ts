import type { CatalogModel } from '../types.ts';
import { unitPricedModel } from '../unit-models.ts';

/**
 * Google Cloud Vision's object localization, priced per image at the published rate for units 1,001 to 5,000,000 a
 * month: $2.25 per 1,000 (https://cloud.google.com/vision/pricing). Google's first 1,000 free units a month and its
 * lower rate past 5 million are the operator's to enjoy; the gateway bills every image at the middle tier.
 */
export const detectionModels: readonly CatalogModel[] = [
  unitPricedModel({
    id: 'google-vision/object-localization',
    modality: 'object-detection',
    capabilities: ['object-detection'],
    perUnitDollars: { image: '0.00225' },
    description: "Google Cloud Vision's OBJECT_LOCALIZATION (images:annotate): labelled bounding boxes",
    note: '$2.25 per 1,000 images, units 1,001-5,000,000 a month (https://cloud.google.com/vision/pricing)',
  }),
];
