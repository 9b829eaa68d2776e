import type { CatalogModel } from './types.ts';

/**
 * Context windows and output limits of the chat models the router can choose, which the price list (genai-prices)
 * gives only in part (a context window for some models, an output limit for none). The figures are models.dev's
 * (https://models.dev, data at github.com/anomalyco/models.dev, MIT licence): each model's `[limit]` table in
 * `providers/<provider>/models/<model>.toml`, read at the commit named below. A model models.dev has since
 * dropped is read at the last commit that listed it. The price list's figures, when it has them, are kept.
 *
 * The catalog takes the context windows from here. The output limits serve the router only: the chat path sizes
 * a request's hold by the model's output limit when the catalog gives one, and a hold the size of a 128,000-token
 * limit would refuse requests that name no max_tokens to accounts that can pay for them.
 */
export interface ModelLimits {
  model: string;
  contextWindow: number;
  maxOutputTokens: number;
  /** The models.dev file (`<provider>/models/<model>`) and the commit it was read at. */
  source: string;
}

/** models.dev as of 2026-07-02. */
const MODELS_DEV = 'f3fc692299671838c7c65fd8126bf84d81a2e817';

const limit = (
  model: string,
  contextWindow: number,
  maxOutputTokens: number,
  file: string,
  commit = MODELS_DEV,
): ModelLimits => ({
  model,
  contextWindow,
  maxOutputTokens,
  source: `https://github.com/anomalyco/models.dev/blob/${commit}/providers/${file}.toml`,
});

export const MODEL_LIMITS: readonly ModelLimits[] = [
  limit(
    'anthropic/claude-3-5-haiku-latest',
    200_000,
    8_192,
    'anthropic/models/claude-3-5-haiku-latest',
    'f4c173befba2e6b24c561286b8765c0d61086553',
  ),
  limit('anthropic/claude-3-5-sonnet', 200_000, 8_192, 'anthropic/models/claude-3-5-sonnet-20241022'),
  limit('anthropic/claude-3-7-sonnet-latest', 200_000, 64_000, 'anthropic/models/claude-3-7-sonnet-20250219'),
  limit('anthropic/claude-3-haiku', 200_000, 4_096, 'anthropic/models/claude-3-haiku-20240307'),
  limit('anthropic/claude-3-opus-latest', 200_000, 4_096, 'anthropic/models/claude-3-opus-20240229'),
  limit('anthropic/claude-3-sonnet', 200_000, 4_096, 'anthropic/models/claude-3-sonnet-20240229'),
  limit('anthropic/claude-fable-5', 1_000_000, 128_000, 'anthropic/models/claude-fable-5'),
  limit('anthropic/claude-haiku-4-5', 200_000, 64_000, 'anthropic/models/claude-haiku-4-5'),
  limit('anthropic/claude-opus-4-0', 200_000, 32_000, 'anthropic/models/claude-opus-4-0'),
  limit('anthropic/claude-opus-4-1', 200_000, 32_000, 'anthropic/models/claude-opus-4-1'),
  limit('anthropic/claude-opus-4-5', 200_000, 64_000, 'anthropic/models/claude-opus-4-5'),
  limit('anthropic/claude-opus-4-6', 1_000_000, 128_000, 'anthropic/models/claude-opus-4-6'),
  limit('anthropic/claude-opus-4-7', 1_000_000, 128_000, 'anthropic/models/claude-opus-4-7'),
  limit('anthropic/claude-opus-4-8', 1_000_000, 128_000, 'anthropic/models/claude-opus-4-8'),
  limit('anthropic/claude-sonnet-4-0', 200_000, 64_000, 'anthropic/models/claude-sonnet-4-0'),
  limit('anthropic/claude-sonnet-4-5', 200_000, 64_000, 'anthropic/models/claude-sonnet-4-5'),
  limit('anthropic/claude-sonnet-4-6', 1_000_000, 64_000, 'anthropic/models/claude-sonnet-4-6'),
  limit('anthropic/claude-sonnet-5', 1_000_000, 128_000, 'anthropic/models/claude-sonnet-5'),
  limit('cohere/c4ai-aya-expanse-32b', 128_000, 4_000, 'cohere/models/c4ai-aya-expanse-32b'),
  limit('cohere/command-a', 256_000, 8_000, 'cohere/models/command-a-03-2025'),
  limit(
    'deepseek/deepseek-v3.2',
    128_000,
    8_000,
    'deepseek/models/deepseek-v3.2',
    '68309a87dba85040f1683f5a38859e5bee505b11',
  ),
  limit('deepseek/deepseek-v4-flash', 1_000_000, 384_000, 'deepseek/models/deepseek-v4-flash'),
  limit('deepseek/deepseek-v4-pro', 1_000_000, 384_000, 'deepseek/models/deepseek-v4-pro'),
  limit(
    'google/gemini-1.5-flash',
    1_000_000,
    8_192,
    'google/models/gemini-1.5-flash',
    '462c7877d9a701d03165c36043e536410eded886',
  ),
  limit(
    'google/gemini-1.5-pro',
    1_000_000,
    8_192,
    'google/models/gemini-1.5-pro',
    '462c7877d9a701d03165c36043e536410eded886',
  ),
  limit('google/gemini-2.0-flash', 1_048_576, 8_192, 'google/models/gemini-2.0-flash'),
  limit('google/gemini-2.0-flash-lite', 1_048_576, 8_192, 'google/models/gemini-2.0-flash-lite'),
  limit('google/gemini-2.5-flash', 1_048_576, 65_536, 'google/models/gemini-2.5-flash'),
  limit('google/gemini-2.5-pro', 1_048_576, 65_536, 'google/models/gemini-2.5-pro'),
  limit('google/gemini-3-flash-preview', 1_048_576, 65_536, 'google/models/gemini-3-flash-preview'),
  limit('google/gemini-3-pro-preview', 1_048_576, 65_536, 'google/models/gemini-3-pro-preview'),
  limit('google/gemini-3.1-flash-lite', 1_048_576, 65_536, 'google/models/gemini-3.1-flash-lite'),
  limit('google/gemini-3.1-pro-preview', 1_048_576, 65_536, 'google/models/gemini-3.1-pro-preview'),
  limit('google/gemini-3.5-flash', 1_048_576, 65_536, 'google/models/gemini-3.5-flash'),
  limit('mistral/mistral-large-2512', 262_144, 262_144, 'mistral/models/mistral-large-2512'),
  limit('mistral/mistral-medium-3-1', 262_144, 262_144, 'mistral/models/mistral-medium-2508'),
  limit('mistral/mistral-medium-3-5', 262_144, 262_144, 'mistral/models/mistral-medium-2604'),
  limit('moonshotai/kimi-k2.6', 262_144, 262_144, 'moonshotai/models/kimi-k2.6'),
  limit('openai/gpt-3.5-turbo', 16_385, 4_096, 'openai/models/gpt-3.5-turbo'),
  limit('openai/gpt-4', 8_192, 8_192, 'openai/models/gpt-4'),
  limit('openai/gpt-4-turbo', 128_000, 4_096, 'openai/models/gpt-4-turbo'),
  limit('openai/gpt-4.1', 1_047_576, 32_768, 'openai/models/gpt-4.1'),
  limit('openai/gpt-4.1-mini', 1_047_576, 32_768, 'openai/models/gpt-4.1-mini'),
  limit('openai/gpt-4.1-nano', 1_047_576, 32_768, 'openai/models/gpt-4.1-nano'),
  limit(
    'openai/gpt-4.5-preview',
    128_000,
    16_384,
    'openai/models/gpt-4.5-preview',
    '428ee4d7ab75c286b0fb262996cb832b81df532c',
  ),
  limit('openai/gpt-4o', 128_000, 16_384, 'openai/models/gpt-4o'),
  limit('openai/gpt-4o-2024-05-13', 128_000, 4_096, 'openai/models/gpt-4o-2024-05-13'),
  limit('openai/gpt-4o-mini', 128_000, 16_384, 'openai/models/gpt-4o-mini'),
  limit('openai/gpt-5', 400_000, 128_000, 'openai/models/gpt-5'),
  limit('openai/gpt-5-mini', 400_000, 128_000, 'openai/models/gpt-5-mini'),
  limit('openai/gpt-5-nano', 400_000, 128_000, 'openai/models/gpt-5-nano'),
  limit('openai/gpt-5.1', 400_000, 128_000, 'openai/models/gpt-5.1'),
  limit('openai/gpt-5.2', 400_000, 128_000, 'openai/models/gpt-5.2'),
  limit('openai/gpt-5.3', 128_000, 16_384, 'openai/models/gpt-5.3-chat-latest'),
  limit('openai/gpt-5.4', 1_050_000, 128_000, 'openai/models/gpt-5.4'),
  limit('openai/gpt-5.4-mini', 400_000, 128_000, 'openai/models/gpt-5.4-mini'),
  limit('openai/gpt-5.4-nano', 400_000, 128_000, 'openai/models/gpt-5.4-nano'),
  limit('openai/gpt-5.5', 1_050_000, 128_000, 'openai/models/gpt-5.5'),
  limit('openai/o1', 200_000, 100_000, 'openai/models/o1'),
  limit(
    'openai/o1-mini',
    128_000,
    65_536,
    'openai/models/o1-mini',
    'fe7927f2dd5e0a5c576b490af9a69ffc4a7d070b',
  ),
  limit(
    'openai/o1-preview',
    128_000,
    32_768,
    'openai/models/o1-preview',
    'fe7927f2dd5e0a5c576b490af9a69ffc4a7d070b',
  ),
  limit('openai/o3', 200_000, 100_000, 'openai/models/o3'),
  limit('openai/o3-mini', 200_000, 100_000, 'openai/models/o3-mini'),
  limit('openai/o4-mini', 200_000, 100_000, 'openai/models/o4-mini'),
  limit('x-ai/grok-3', 131_072, 8_192, 'xai/models/grok-3', 'e283875ce72e6786874280550a91c453012120cb'),
  limit(
    'x-ai/grok-3-mini',
    131_072,
    8_192,
    'xai/models/grok-3-mini',
    'e283875ce72e6786874280550a91c453012120cb',
  ),
  limit('x-ai/grok-4-0709', 256_000, 64_000, 'xai/models/grok-4', 'e283875ce72e6786874280550a91c453012120cb'),
  limit('x-ai/grok-4.20', 1_000_000, 30_000, 'xai/models/grok-4.20-0309-reasoning'),
  limit('x-ai/grok-4.20-multi-agent', 1_000_000, 30_000, 'xai/models/grok-4.20-multi-agent-0309'),
  limit('x-ai/grok-4.3', 1_000_000, 30_000, 'xai/models/grok-4.3'),
];

const byId = new Map(MODEL_LIMITS.map((l) => [l.model, l]));

/** The model's limits: the catalog's own, else this table's, else null (unknown). */
export function knownLimits(model: CatalogModel): {
  contextWindow: number | null;
  maxOutputTokens: number | null;
} {
  const listed = byId.get(model.id);
  return {
    contextWindow: model.contextWindow ?? listed?.contextWindow ?? null,
    maxOutputTokens: model.maxOutputTokens ?? listed?.maxOutputTokens ?? null,
  };
}

/** The table's context window for a model the price list gives none. */
export const contextWindowOf = (id: string): number | null => byId.get(id)?.contextWindow ?? null;
