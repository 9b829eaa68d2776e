import type { CatalogModel } from '../../catalog/types.ts';
import { mistralOcr } from '../../providers/mistral/ocr.ts';
import type { EndpointSpec } from '../models.ts';
import type { OcrAdapter } from './types.ts';

const ADAPTERS: Readonly<Record<string, OcrAdapter>> = { mistral: mistralOcr };

export const ocrEndpoint: EndpointSpec<OcrAdapter> = {
  path: '/v1/ocr',
  modality: 'ocr',
  adapterOf: (model: CatalogModel) => ADAPTERS[model.provider],
  unpriced: (model: CatalogModel) =>
    model.prices.perUnitNanos?.page === undefined
      ? 'has no per-page price, so it cannot be billed'
      : undefined,
};

export const PREFERRED_OCR_MODELS = ['mistral/mistral-ocr-latest'];
