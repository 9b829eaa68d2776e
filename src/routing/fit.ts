import { knownLimits } from '../catalog/model-limits.ts';
import type { CatalogModel } from '../catalog/types.ts';
import type { ComplexityInput } from './complexity.ts';
import type { Strategy } from './strategy.ts';

// What a request asks of a model and which models take it: the router's rule 2 (docs/routing.md).

/**
 * What the router assumes of a model whose context window or output limit no source gives: the gateway's own
 * default output (the hold of a request without max_tokens) and a small window, which any chat model in service holds.
 * A request within both may go to such a model; a larger one goes only to models known to take it.
 */
export const UNKNOWN_CONTEXT_TOKENS = 32_768;
export const UNKNOWN_OUTPUT_TOKENS = 8_192;

/** What the router needs to know of a chat request: what it asks of a model, and how big it is. */
export interface RouteAsk {
  accountId: string;
  /** A sub-account's key: the router chooses only among the models it may use (its `allowed_models`). */
  subAccountId?: string | null;
  requested: 'auto' | 'auto/text';
  strategy: Strategy;
  inputTokens: number;
  /** The client's output limit per choice, when it gave one. */
  outputLimit?: number;
  choices: number;
  tools: boolean;
  images: boolean;
  json: boolean;
  reasoning: boolean;
  stream: boolean;
  /** temperature or top_p other than 1, which some models refuse. */
  sampling: boolean;
  baselineModel?: string;
  /** conversations.ts `conversationKey`. */
  conversation?: string;
  complexity: ComplexityInput;
}

type Check = [why: string, fits: (model: CatalogModel, ask: RouteAsk) => boolean];

export const has = (model: CatalogModel, capability: string) => model.capabilities.includes(capability);
const textOnly = (model: CatalogModel) => !has(model, 'vision') && !/audio|image|realtime/.test(model.id);

/** What a request may ask of a model, each with the words that say a model lacks it. */
export const CHECKS: Check[] = [
  ['cannot call tools', (m, a) => !a.tools || has(m, 'function_calling')],
  ['take no image input', (m, a) => !a.images || has(m, 'vision')],
  ['have no JSON mode', (m, a) => !a.json || has(m, 'json_mode')],
  ['do not reason (reasoning_effort)', (m, a) => !a.reasoning || has(m, 'reasoning')],
  ['do not stream', (m, a) => !a.stream || has(m, 'streaming')],
  ['refuse temperature and top_p', (m, a) => !a.sampling || !m.quirks.noSampling],
  ['are not text-only (auto/text)', (m, a) => a.requested !== 'auto/text' || textOnly(m)],
  [
    'have a context window too small for the prompt and the output limit',
    (m, a) =>
      a.inputTokens + (a.outputLimit ?? 1) <= (knownLimits(m).contextWindow ?? UNKNOWN_CONTEXT_TOKENS),
  ],
  [
    'have an output limit under the one asked',
    (m, a) =>
      a.outputLimit === undefined ||
      a.outputLimit <= (knownLimits(m).maxOutputTokens ?? UNKNOWN_OUTPUT_TOKENS),
  ],
];
