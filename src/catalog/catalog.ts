import type { Provider } from '@pydantic/genai-prices';
import { catalogModel } from './classify.ts';
import { extraCatalogModels } from './extra-models.ts';
import { bundledProviders, isPriceTemplate } from './genai-prices.ts';
import { localCatalogModels } from './local.ts';
import { contextWindowOf } from './model-limits.ts';
import type { Catalog, CatalogFilter, CatalogModel } from './types.ts';

export interface CatalogSource {
  /** Defaults to the price list bundled with @pydantic/genai-prices. */
  providers?: readonly Provider[];
  /** Which of a model's dated rates are in effect; defaults to the time of the build. */
  now?: Date;
}

/**
 * Every model the gateway knows: the built-in local models, then the price list's. Built once at start (about
 * 1,700 models in a few tens of milliseconds); lookups afterwards are map reads.
 */
export function buildCatalog(source: CatalogSource = {}): Catalog {
  const now = source.now ?? new Date();
  const byId = new Map<string, CatalogModel>();
  const add = (model: CatalogModel) => {
    // A price list with two entries under one id would shadow the second in genai-prices too: keep the first.
    if (!byId.has(model.id)) byId.set(model.id, model);
  };
  for (const model of localCatalogModels()) add(model);
  for (const provider of source.providers ?? bundledProviders) {
    for (const model of provider.models) if (!isPriceTemplate(model)) add(catalogModel(provider, model, now));
  }
  // Moderation and rerank models the price list lacks; a model it gains later is priced from there instead.
  for (const model of extraCatalogModels) {
    // A model the price list prices per token that an endpoint bills per unit (gpt-image-1 per image) keeps the
    // price list's figures and gains the endpoint's per-unit prices.
    const listed = byId.get(model.id);
    if (listed && model.prices.perUnitNanos && !listed.prices.perUnitNanos) {
      const prices = { ...listed.prices, perUnitNanos: model.prices.perUnitNanos };
      byId.set(model.id, { ...listed, prices, priceNotes: [...listed.priceNotes, ...model.priceNotes] });
    }
    add(model);
  }
  // Context windows the price list lacks (Gemini 2.5 Pro, the Gemini 3 Pro previews, GPT-4.5, Mistral's).
  for (const model of byId.values()) {
    const contextWindow = model.contextWindow ?? contextWindowOf(model.id);
    if (contextWindow !== model.contextWindow) byId.set(model.id, { ...model, contextWindow });
  }
  const models = [...byId.values()];
  // Ids are unique ignoring case too, so a client's `OpenAI/GPT-4o` can still find `openai/gpt-4o`.
  const byLowerId = new Map(models.map((m) => [m.id.toLowerCase(), m]));
  const providers = [...new Set(models.map((m) => m.provider))].sort();
  return {
    all: () => [...models],
    get: (id) => byId.get(id) ?? byLowerId.get(id.toLowerCase()),
    list: (filter: CatalogFilter) =>
      models.filter(
        (m) =>
          (!filter.modality || m.modality === filter.modality) &&
          // Ids match ignoring case; so does the provider filter.
          (!filter.provider || m.provider === filter.provider.toLowerCase()),
      ),
    providers: () => [...providers],
  };
}
