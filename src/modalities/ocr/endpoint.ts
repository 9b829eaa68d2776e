import type { CatalogModel } from '../../catalog/types.ts';
import type { OcrAdapter } from '../../contracts/ocr.ts';
import { adapterFor } from '../../providers/registry.ts';
import type { EndpointSpec } from '../models.ts';

export const ocrEndpoint: EndpointSpec<OcrAdapter> = {
  path: '/v1/ocr',
  modality: 'ocr',
  adapterOf: (model: CatalogModel) => adapterFor(model, 'ocr'),
  unpriced: (model: CatalogModel) =>
    model.prices.perUnitNanos?.page === undefined
      ? 'has no per-page price, so it cannot be billed'
      : undefined,
};

export const PREFERRED_OCR_MODELS = ['mistral/mistral-ocr-latest'];
