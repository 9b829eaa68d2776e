import {
  bucketCapacity,
  decision,
  type RateDecision,
  type RateLimiter,
  refusedForRate,
  refusesAll,
  TOKEN_EPSILON,
} from './rate-limiter.ts';

interface Bucket {
  tokens: number;
  /** clock time of the last take, when `tokens` was true */
  at: number;
  /** clock time from which the bucket is full unless taken from again */
  fullAt: number;
}

/** A bucket idle and full this long is indistinguishable from a fresh one, so it is dropped. */
const EVICT_AFTER_FULL_MS = 120_000;
/** Sweeping at most once a minute keeps eviction amortised O(1) per take, with no timer to clean up. */
const SWEEP_EVERY_MS = 60_000;

/** One process's buckets; each gateway instance counts on its own. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly now: () => number;
  private lastSweep: number;

  constructor(options: { now?: () => number } = {}) {
    this.now = options.now ?? Date.now;
    this.lastSweep = this.now();
  }

  async take(bucket: string, ratePerMinute: number): Promise<RateDecision> {
    if (refusesAll(ratePerMinute)) return refusedForRate();
    const now = this.now();
    this.sweep(now);
    const capacity = bucketCapacity(ratePerMinute);
    const perMs = ratePerMinute / 60_000;
    const state = this.buckets.get(bucket);
    // A clock stepping backwards must not drain the bucket, hence no negative elapsed time.
    let tokens = state ? Math.min(capacity, state.tokens + Math.max(0, now - state.at) * perMs) : capacity;
    const allowed = tokens >= 1 - TOKEN_EPSILON;
    if (allowed) tokens = Math.max(0, tokens - 1);
    this.buckets.set(bucket, { tokens, at: now, fullAt: now + (capacity - tokens) / perMs });
    return decision(allowed, tokens, allowed ? 0 : (1 - tokens) / perMs, ratePerMinute);
  }

  async close(): Promise<void> {
    this.buckets.clear();
  }

  /** Buckets currently held, for tests of eviction. */
  get size(): number {
    return this.buckets.size;
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    for (const [key, state] of this.buckets) {
      if (now - state.fullAt > EVICT_AFTER_FULL_MS) this.buckets.delete(key);
    }
  }
}
