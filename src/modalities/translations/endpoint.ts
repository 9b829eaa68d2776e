import type { CatalogModel } from '../../catalog/types.ts';
import type { TranslationAdapter } from '../../contracts/translations.ts';
import { adapterFor } from '../../providers/registry.ts';
import type { EndpointSpec } from '../models.ts';

/** The machine-translation models (modality `translation`); chat models are served beside them, see service.ts. */
export const translationEndpoint: EndpointSpec<TranslationAdapter> = {
  path: '/v1/translations',
  modality: 'translation',
  adapterOf: (model: CatalogModel) => adapterFor(model, 'translations'),
  unpriced: (model: CatalogModel) =>
    model.prices.perUnitNanos?.character === undefined
      ? 'has no per-character price, so it cannot be billed'
      : undefined,
};

export const PREFERRED_TRANSLATION_MODELS = ['deepl/translate'];
