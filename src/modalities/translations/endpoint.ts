import type { CatalogModel } from '../../catalog/types.ts';
import { deeplTranslate } from '../../providers/deepl/translate.ts';
import type { EndpointSpec } from '../models.ts';
import type { TranslationAdapter } from './types.ts';

const ADAPTERS: Readonly<Record<string, TranslationAdapter>> = { deepl: deeplTranslate };

/** The machine-translation models (modality `translation`); chat models are served beside them, see service.ts. */
export const translationEndpoint: EndpointSpec<TranslationAdapter> = {
  path: '/v1/translations',
  modality: 'translation',
  adapterOf: (model: CatalogModel) => ADAPTERS[model.provider],
  unpriced: (model: CatalogModel) =>
    model.prices.perUnitNanos?.character === undefined
      ? 'has no per-character price, so it cannot be billed'
      : undefined,
};

export const PREFERRED_TRANSLATION_MODELS = ['deepl/translate'];
