import type { CatalogModel } from '../types.ts';
import { unitPricedModel } from '../unit-models.ts';

/**
 * DeepL's text translation, priced per source character (Unicode code point) at DeepL API Pro's published usage rate:
 * $25 per million characters in USD (€20 in EUR), beside a monthly base fee the gateway does not pass on
 * (https://www.deepl.com/pro-api, https://support.deepl.com/hc/en-us/articles/360020685720). DeepL API Free keys
 * cost nothing up to 500,000 characters a month; the gateway bills them at the Pro rate too.
 */
export const translationModels: readonly CatalogModel[] = [
  unitPricedModel({
    id: 'deepl/translate',
    modality: 'translation',
    capabilities: ['translation'],
    perUnitDollars: { character: '0.000025' },
    description: "DeepL's text translation (POST /v2/translate), billed per source character",
    note: '$25 per million characters, DeepL API Pro usage rate (https://www.deepl.com/pro-api)',
  }),
];
