import type { ReportedUsage } from '../../contracts/chat.ts';

interface OpenAiUsage {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  prompt_tokens_details?: { cached_tokens?: unknown } | null;
  completion_tokens_details?: { reasoning_tokens?: unknown } | null;
  /** DeepSeek reports cache hits here instead. */
  prompt_cache_hit_tokens?: unknown;
}

const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;

/** Usage in the chat-completions format, or undefined when the counts are missing (never a silent zero). */
export function readOpenAiUsage(usage: unknown): ReportedUsage | undefined {
  if (!usage || typeof usage !== 'object') return undefined;
  const u = usage as OpenAiUsage;
  const promptTokens = count(u.prompt_tokens);
  const completionTokens = count(u.completion_tokens);
  if (promptTokens === undefined || completionTokens === undefined) return undefined;
  return {
    promptTokens,
    completionTokens,
    cachedPromptTokens:
      count(u.prompt_tokens_details?.cached_tokens) ?? count(u.prompt_cache_hit_tokens) ?? 0,
    cacheWriteTokens: 0,
    reasoningTokens: count(u.completion_tokens_details?.reasoning_tokens) ?? 0,
  };
}
