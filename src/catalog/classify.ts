import type { ModelInfo, Provider } from '@pydantic/genai-prices';
import type { CapabilityId } from './capabilities.ts';
import { upstreamModelId } from './genai-prices.ts';
import { resolvePrices } from './prices.ts';
import {
  API_FAMILIES,
  applies,
  CAPABILITY_RULES,
  CHAT_DEFAULTS,
  MODALITY_RULES,
  type ModelFacts,
  QUIRK_RULES,
} from './rules.ts';
import type { ApiFamily, CatalogModel, Modality, Quirks } from './types.ts';

export const apiFamilyOf = (provider: string): ApiFamily => API_FAMILIES[provider] ?? 'openai';

/** One price-list entry as a catalog model, its prices as of `now`. */
export function catalogModel(provider: Provider, model: ModelInfo, now: Date): CatalogModel {
  const facts = factsOf(provider.id, model);
  const api = apiFamilyOf(provider.id);
  const { modality, capabilities } = kindOf(facts);
  const quirks = quirksOf(facts, api);
  if (quirks.reasoning && capabilities.includes('chat')) capabilities.push('reasoning');
  const { prices, notes } = resolvePrices(model, now);
  return {
    id: `${provider.id}/${model.id}`,
    provider: provider.id,
    providerModelId: upstreamModelId(model),
    name: model.name ?? model.id,
    api,
    modality,
    contextWindow: model.context_window ?? null,
    maxOutputTokens: null,
    prices,
    priceNotes: notes,
    capabilities,
    quirks,
    deprecated: model.deprecated ?? false,
    description: model.description ?? null,
  };
}

function factsOf(provider: string, model: ModelInfo): ModelFacts {
  const entries = Array.isArray(model.prices) ? model.prices.map((c) => c.prices) : [model.prices];
  return {
    provider,
    id: model.id.toLowerCase(),
    priceKeys: new Set(entries.flatMap((prices) => Object.keys(prices))),
    description: (model.description ?? '').toLowerCase(),
  };
}

function kindOf(facts: ModelFacts): { modality: Modality; capabilities: CapabilityId[] } {
  const rule = MODALITY_RULES.find((r) => applies(r, facts));
  if (rule) return { modality: rule.modality, capabilities: [...rule.capabilities] };
  let capabilities: CapabilityId[] = [...CHAT_DEFAULTS];
  for (const r of CAPABILITY_RULES) {
    if (!applies(r, facts)) continue;
    const removed = new Set(r.remove ?? []);
    capabilities = capabilities.filter((c) => !removed.has(c));
    for (const c of r.add ?? []) if (!capabilities.includes(c)) capabilities.push(c);
  }
  return { modality: 'text', capabilities };
}

function quirksOf(facts: ModelFacts, api: ApiFamily): Quirks {
  const quirks: Quirks = {
    reasoning: false,
    noSampling: false,
    nativeFormat: api === 'anthropic' || api === 'gemini' ? api : null,
    maxTokensField: 'max_tokens',
  };
  for (const rule of QUIRK_RULES) if (applies(rule, facts)) Object.assign(quirks, rule.set);
  return quirks;
}
