import {
  type BucketLimit,
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

interface Level extends BucketLimit {
  capacity: number;
  perMs: number;
  tokens: number;
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
    const { bucket: _one, ...taken } = await this.takeAll([{ bucket, ratePerMinute }]);
    return taken;
  }

  async takeAll(buckets: readonly BucketLimit[], tokens = 1): Promise<RateDecision> {
    if (buckets.some((b) => refusesAll(b.ratePerMinute))) return refusedForRate();
    const now = this.now();
    this.sweep(now);
    const levels = this.levels(buckets, now);
    const allowed = levels.every((l) => l.tokens >= tokens - TOKEN_EPSILON);
    let binding = levels[0];
    let waitMs = 0;
    for (const level of levels) {
      if (allowed) level.tokens = Math.max(0, level.tokens - tokens);
      else waitMs = Math.max(waitMs, Math.max(0, tokens - level.tokens) / level.perMs);
      this.store(level, now);
      if (binding === undefined || level.tokens < binding.tokens) binding = level;
    }
    if (!binding) return refusedForRate();
    return { ...decision(allowed, binding.tokens, waitMs, binding.ratePerMinute), bucket: binding.bucket };
  }

  async giveBack(buckets: readonly BucketLimit[], tokens: number): Promise<void> {
    const now = this.now();
    const live = buckets.filter((b) => !refusesAll(b.ratePerMinute));
    for (const level of this.levels(live, now)) {
      level.tokens = Math.min(level.capacity, Math.max(-level.capacity, level.tokens + tokens));
      this.store(level, now);
    }
  }

  async close(): Promise<void> {
    this.buckets.clear();
  }

  /** Buckets currently held, for tests of eviction. */
  get size(): number {
    return this.buckets.size;
  }

  /** Each bucket's tokens now: what was stored plus what refilled since, at most its capacity. */
  private levels(buckets: readonly BucketLimit[], now: number): Level[] {
    return buckets.map(({ bucket, ratePerMinute }) => {
      const capacity = bucketCapacity(ratePerMinute);
      const perMs = ratePerMinute / 60_000;
      const state = this.buckets.get(bucket);
      // A clock stepping backwards must not drain the bucket, hence no negative elapsed time.
      const tokens = state
        ? Math.min(capacity, state.tokens + Math.max(0, now - state.at) * perMs)
        : capacity;
      return { bucket, ratePerMinute, capacity, perMs, tokens };
    });
  }

  private store(level: Level, now: number): void {
    this.buckets.set(level.bucket, {
      tokens: level.tokens,
      at: now,
      fullAt: now + (level.capacity - level.tokens) / level.perMs,
    });
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    for (const [key, state] of this.buckets) {
      if (now - state.fullAt > EVICT_AFTER_FULL_MS) this.buckets.delete(key);
    }
  }
}
