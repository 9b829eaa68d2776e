import { dollarsPerMillion } from '../contracts/money.ts';
import type { CapabilityId } from './capabilities.ts';
import type { CatalogModel, Modality } from './types.ts';

/** A model the price list lacks, billed in a unit other than tokens. */
export interface UnitPricedModel {
  id: string;
  modality: Modality;
  /** The main use first (it names the model's endpoint). */
  capabilities: readonly CapabilityId[];
  /** Dollars per ONE unit, as a decimal string, keyed by the unit (`character`, `image`, `page`). */
  perUnitDollars: Readonly<Record<string, string>>;
  description: string;
  /** Where the price comes from. */
  note: string;
}

/**
 * The catalog entry of such a model. It imports nothing but types and charge.ts, so that the endpoints' model lists
 * can use it without an import cycle through extra-models.ts.
 */
export function unitPricedModel(spec: UnitPricedModel): CatalogModel {
  const slash = spec.id.indexOf('/');
  const name = spec.id.slice(slash + 1);
  return {
    id: spec.id,
    provider: spec.id.slice(0, slash),
    providerModelId: name,
    name,
    api: 'openai',
    modality: spec.modality,
    contextWindow: null,
    maxOutputTokens: null,
    prices: {
      inputNanosPerMillion: null,
      outputNanosPerMillion: null,
      cachedInputNanosPerMillion: null,
      cacheWriteNanosPerMillion: null,
      // dollarsPerMillion turns "$X" into nano-dollars whatever the unit: the figure is per one unit here.
      perUnitNanos: Object.fromEntries(
        Object.entries(spec.perUnitDollars).map(([unit, dollars]) => [unit, dollarsPerMillion(dollars)]),
      ),
    },
    priceNotes: [spec.note],
    capabilities: [...spec.capabilities],
    quirks: { reasoning: false, noSampling: false, nativeFormat: null, maxTokensField: 'max_tokens' },
    deprecated: false,
    description: spec.description,
  };
}

/** A price line for `quantity` units at a per-unit price (the line's price is per million units). */
export function unitLine(item: string, quantity: number, perUnitNanos: bigint) {
  return { item, quantity, unitPriceNanosPerMillion: perUnitNanos * 1_000_000n };
}
