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
}): Record<string, string> {
  return {
    ...modelHeaders(outcome.model),
    'x-latency-ms': String(outcome.latencyMs),
    ...(outcome.costNanos !== undefined && { 'x-cost-cents': String(nanosToCents(outcome.costNanos)) }),
  };
}

/** Which model and upstream serve: all a realtime stream can say when it opens. */
export function modelHeaders(model: CatalogModel): { 'x-model': string; 'x-provider': string } {
  return { 'x-model': model.id, 'x-provider': model.provider };
}
