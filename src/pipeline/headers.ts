import type { CatalogModel } from '../catalog/types.ts';
import { nanosToCents } from '../contracts/money.ts';

/**
 * The headers every served model call carries, made here alone: which model and upstream served it, how long the
 * provider took, and what it cost (a stream's cost is known only at its end, so it has none).
 */
export function outcomeHeaders(outcome: {
  model: CatalogModel;
  latencyMs: number;
  costNanos?: bigint;
  savedNanos?: bigint;
}): Record<string, string> {
  return {
    ...modelHeaders(outcome.model),
    'x-latency-ms': String(outcome.latencyMs),
    ...(outcome.costNanos !== undefined && { 'x-cost-cents': String(nanosToCents(outcome.costNanos)) }),
    ...(outcome.savedNanos !== undefined && { 'x-auto-saved-usd': usdText(outcome.savedNanos) }),
  };
}

/**
 * X-Cache-Status and RFC 9211's Cache-Status: what the response cache did for this answer. Undefined is a request
 * the cache took no part in (off, or a model that does not resolve).
 */
export function cacheHeaders(
  lookup: { status: string; cacheStatus: string } | undefined,
): Record<string, string> {
  if (!lookup) return { 'x-cache-status': 'skip', 'cache-status': 'gateway; fwd=bypass' };
  return { 'x-cache-status': lookup.status, 'cache-status': lookup.cacheStatus };
}

/** What chose the model of a routed request: the strategy, the model, a short reason, and the baseline. */
export interface RoutedHeaders {
  strategy: string;
  model: string;
  /** Short: `cheapest`, `fastest`, `best-quality`, `complexity 0.35`, `conversation`, `eval:<id>`. */
  reason: string;
  baseline: string;
}

/** The routing headers, set as soon as a model is chosen so that an error after it carries them too. */
export function routingHeaders(routed: RoutedHeaders): Record<string, string> {
  return {
    'x-routing-strategy': routed.strategy,
    'x-routing-model': routed.model,
    'x-routing-reason': routed.reason,
    'x-auto-baseline-model': routed.baseline,
  };
}

/** Nano-dollars as a decimal dollar amount, exact (nine decimals), with its sign: `-0.000001250`. */
export function usdText(nanos: bigint): string {
  const sign = nanos < 0n ? '-' : '';
  const abs = nanos < 0n ? -nanos : nanos;
  return `${sign}${abs / 1_000_000_000n}.${(abs % 1_000_000_000n).toString().padStart(9, '0')}`;
}

/** Which model and upstream serve: all a realtime stream can say when it opens. */
export function modelHeaders(model: CatalogModel): { 'x-model': string; 'x-provider': string } {
  return { 'x-model': model.id, 'x-provider': model.provider };
}
