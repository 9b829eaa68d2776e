import type { ItemResult } from '../../commands/eval/decide.ts';

/** z for a two-sided 95% interval. */
const Z = 1.959964;

export interface Interval {
  mean: number;
  low: number;
  high: number;
}

/** Wilson's score interval of a share of passes: sound at 0/n and n/n, where the normal one collapses to a point. */
export function wilson(passes: number, n: number): Interval {
  if (n === 0) return { mean: 0, low: 0, high: 1 };
  const p = passes / n;
  const z2 = Z * Z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (Z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  return { mean: p, low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

/** The normal interval of a mean: mean ± z·s/√n (a single value's interval is the value). */
export function normal(values: readonly number[]): Interval {
  const n = values.length;
  if (n === 0) return { mean: 0, low: 0, high: 0 };
  const mean = values.reduce((sum, v) => sum + v, 0) / n;
  if (n === 1) return { mean, low: mean, high: mean };
  const variance = values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / (n - 1);
  const half = (Z * Math.sqrt(variance)) / Math.sqrt(n);
  return { mean, low: mean - half, high: mean + half };
}

/** Scores all 0 or 1 are passes and fails (Wilson); any other score makes them a mean (normal). */
export function scoreInterval(scores: readonly number[]): Interval & { kind: 'wilson' | 'normal' } {
  if (scores.every((s) => s === 0 || s === 1)) {
    return { ...wilson(scores.filter((s) => s === 1).length, scores.length), kind: 'wilson' };
  }
  const interval = normal(scores);
  return { ...interval, low: Math.max(0, interval.low), high: Math.min(1, interval.high), kind: 'normal' };
}

export const overlap = (a: Interval, b: Interval) => a.low <= b.high && b.low <= a.high;

/** The nearest-rank percentile of the values; null for none. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] ?? null;
}

export interface CandidateFigures {
  model: string;
  n: number;
  scored: number;
  errors: number;
  /** Null when nothing of it was graded. */
  score: (Interval & { kind: 'wilson' | 'normal' }) | null;
  costNanos: bigint;
  judgeCostNanos: bigint;
  cost: Interval;
  latency: Interval;
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
  eligible: boolean;
}

export interface Verdict {
  winner: string | null;
  tie: boolean;
  tied: string[];
  reason: string;
  candidates: CandidateFigures[];
}

/**
 * A candidate's figures over its answers. A failed call scores 0 (a model that does not answer is not a good
 * one); an answer nothing could grade is left out of the mean.
 */
export function figures(model: string, results: readonly ItemResult[]): CandidateFigures {
  const scores = results.flatMap((r) => (r.failed ? [0] : r.score === null ? [] : [r.score]));
  const served = results.filter((r) => !r.failed);
  const latencies = served.map((r) => r.latencyMs);
  return {
    model,
    n: results.length,
    scored: results.filter((r) => !r.failed && r.score !== null).length,
    errors: results.length - served.length,
    score: scores.length === 0 ? null : scoreInterval(scores),
    costNanos: results.reduce((sum, r) => sum + r.costNanos, 0n),
    judgeCostNanos: results.reduce((sum, r) => sum + r.judgeCostNanos, 0n),
    cost: normal(results.map((r) => Number(r.costNanos))),
    latency: normal(latencies),
    latencyP50Ms: percentile(latencies, 50),
    latencyP95Ms: percentile(latencies, 95),
    eligible: false,
  };
}

const cheaperFirst = (a: CandidateFigures, b: CandidateFigures) =>
  a.costNanos < b.costNanos ? -1 : a.costNanos > b.costNanos ? 1 : 0;

/** Among tied candidates the cheaper wins; the list of tied models is in the candidates' order. */
function pick(tied: CandidateFigures[], order: string[], why: string): Omit<Verdict, 'candidates'> {
  const winner = [...tied].sort(cheaperFirst)[0];
  const models = order.filter((m) => tied.some((c) => c.model === m));
  const tie = tied.length > 1;
  return {
    winner: winner?.model ?? null,
    tie,
    tied: tie ? models : [],
    reason: tie ? `${why}; ${models.length} tied within their 95% intervals, the cheapest wins` : why,
  };
}

/**
 * The winner by the metric. Quality: the best mean score, tied with every candidate whose interval overlaps
 * its own. Cost and speed: among the candidates that answered every item and are quality-tied with the best
 * (a cheap or fast wrong model does not win), the lowest total cost, or the lowest p50 latency, tied with those
 * whose interval (per-item cost, latency) overlaps it. Among tied candidates the cheapest wins.
 */
export function verdict(
  metric: 'quality' | 'cost' | 'speed',
  order: string[],
  all: Map<string, readonly ItemResult[]>,
): Verdict {
  const candidates = order.map((model) => figures(model, all.get(model) ?? []));
  const graded = candidates.filter((c) => c.score !== null);
  const best = [...graded].sort(
    (a, b) => (b.score?.mean ?? 0) - (a.score?.mean ?? 0) || cheaperFirst(a, b),
  )[0];
  // Nothing graded anywhere (no expected answers and no judge): quality cannot tell the candidates apart.
  const qualityTied = (c: CandidateFigures) =>
    best === undefined || (c.score !== null && best.score !== null && overlap(c.score, best.score));
  for (const c of candidates) c.eligible = c.errors === 0 && c.n > 0 && qualityTied(c);

  if (metric === 'quality') {
    const tied = candidates.filter(qualityTied);
    const why = best ? `highest mean score (${best.model})` : 'no answer could be graded';
    return { ...pick(tied, order, why), candidates };
  }
  const eligible = candidates.filter((c) => c.eligible);
  if (eligible.length === 0) {
    return {
      winner: null,
      tie: false,
      tied: [],
      reason: 'no candidate answered every item with a score tied with the best',
      candidates,
    };
  }
  if (metric === 'cost') {
    const cheapest = [...eligible].sort(cheaperFirst)[0] as CandidateFigures;
    const tied = eligible.filter((c) => overlap(c.cost, cheapest.cost));
    return { ...pick(tied, order, `lowest total cost (${cheapest.model})`), candidates };
  }
  const fastest = [...eligible].sort(
    (a, b) => (a.latencyP50Ms ?? Number.POSITIVE_INFINITY) - (b.latencyP50Ms ?? Number.POSITIVE_INFINITY),
  )[0] as CandidateFigures;
  const tied = eligible.filter((c) => overlap(c.latency, fastest.latency));
  return { ...pick(tied, order, `lowest p50 latency (${fastest.model})`), candidates };
}
