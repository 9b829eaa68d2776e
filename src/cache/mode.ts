import { RequestRefused } from '../contracts/errors.ts';

export const CACHE_MODES = ['auto', 'force', 'semantic', 'skip'] as const;
export type CacheMode = (typeof CACHE_MODES)[number];

/** What each mode does, as `/v1/capabilities` and docs/cache.md say it. */
export const MODE_DESCRIPTIONS: Record<CacheMode, string> = {
  auto: "The default. Exact lookup and store, only for requests that ask for a repeatable answer: temperature 0, or a seed given. Without a temperature a provider samples (OpenAI's default is 1), so such a request is neither looked up nor stored (X-Cache-Status: skip); send cache: force, or have the operator set the account's cache_default, to cache it anyway.",
  force: 'Exact lookup and store whatever the temperature.',
  semantic:
    'Exact lookup first, then a semantic lookup for single-turn requests (one user message, an optional system prompt that must match exactly, no tools) among every stored single-turn entry of the same model and parameters, whichever mode stored it; stored for both, whatever the temperature.',
  skip: 'Neither lookup nor store.',
};

/**
 * Whether the request asks for a repeatable answer, which `auto` may serve again: temperature 0, or a seed. An
 * absent temperature is the provider's default (1 at OpenAI and Anthropic), so two such calls are meant to differ.
 */
export function deterministic(body: { temperature?: unknown; seed?: unknown }): boolean {
  return body.temperature === 0 || (body.seed !== undefined && body.seed !== null);
}

/**
 * The mode a request runs in: its own `cache` field, else its account's `cache_default`, else `auto`. A function of
 * the settings alone, so that deciding a request is not the cache's leaves the cache itself untouched.
 */
export function modeFor(
  settings: { accountDefault?: (accountId: string) => CacheMode | undefined },
  accountId: string,
  requested: CacheMode | undefined,
): CacheMode {
  return requested ?? settings.accountDefault?.(accountId) ?? 'auto';
}

/** What the cache does for one request: look up (and how), and store. */
export interface CachePolicy {
  mode: CacheMode;
  exact: boolean;
  semantic: boolean;
  store: boolean;
}

export function policyOf(mode: CacheMode | undefined, repeatable: boolean): CachePolicy {
  const chosen = mode ?? 'auto';
  switch (chosen) {
    case 'auto':
      return { mode: chosen, exact: repeatable, semantic: false, store: repeatable };
    case 'force':
      return { mode: chosen, exact: true, semantic: false, store: true };
    case 'semantic':
      return { mode: chosen, exact: true, semantic: true, store: true };
    case 'skip':
      return { mode: chosen, exact: false, semantic: false, store: false };
    default: {
      const _exhaustive: never = chosen;
      return _exhaustive;
    }
  }
}

/** The body's `cache` field on endpoints whose schema does not declare it (embeddings, messages). */
export function modeOf(value: unknown): CacheMode | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && (CACHE_MODES as readonly string[]).includes(value))
    return value as CacheMode;
  throw new RequestRefused('invalid', `'cache': one of ${CACHE_MODES.join(', ')}`);
}

/**
 * The similarity a semantic hit needs: the configured threshold, or the request's `x-gw-cache-threshold` when it
 * is higher. A request may only make matching stricter: a lower value is ignored, since a loose threshold is how
 * a cache comes to answer a question with its negation.
 */
export function thresholdOf(header: string | string[] | undefined, configured: number): number {
  if (header === undefined) return configured;
  const text = (Array.isArray(header) ? header[0] : header)?.trim() ?? '';
  const value = Number(text);
  if (text === '' || !Number.isFinite(value) || value < 0 || value > 1)
    throw new RequestRefused('invalid', "'x-gw-cache-threshold': a number from 0 to 1");
  return Math.max(value, configured);
}
