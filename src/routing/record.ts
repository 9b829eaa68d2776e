import type { RoutingDecision } from './router.ts';

/** Candidates written to the request log, best-suited first; the rest are counted. */
const LOGGED_CANDIDATES = 20;

/** The decision as the request log keeps it (and the preview shows it): plain JSON, money as nano-dollar strings. */
export function routingRecord(decision: RoutingDecision, savedNanos?: bigint) {
  const first = new Set(decision.order.map((m) => m.id));
  const listed = [
    ...decision.candidates.filter((c) => first.has(c.model.id)),
    ...decision.candidates.filter((c) => !first.has(c.model.id)),
  ].slice(0, LOGGED_CANDIDATES);
  return {
    requested: decision.requested,
    strategy: decision.strategy,
    chosen: decision.chosen.model.id,
    reason: decision.reason,
    fallbacks: decision.order.slice(1).map((m) => m.id),
    complexity: decision.complexity,
    quality_source: decision.qualitySource,
    baseline: decision.baseline.id,
    baseline_price_nanos: decision.baselinePriceNanos.toString(),
    saved_nanos: savedNanos === undefined ? null : savedNanos.toString(),
    candidates_count: decision.candidates.length,
    candidates: listed.map((c) => ({
      model: c.model.id,
      price_nanos: c.priceNanos.toString(),
      latency_ms: c.latencyMs,
      quality: c.quality,
      quality_raw: c.rawQuality,
    })),
  };
}
