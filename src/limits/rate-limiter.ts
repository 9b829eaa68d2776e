export interface BucketLimit {
  bucket: string;
  ratePerMinute: number;
}

export interface RateDecision {
  allowed: boolean;
  /** whole seconds to wait before a retry can succeed; 0 when allowed */
  retryAfterSeconds: number;
  remaining: number;
  limit: number;
  /** The binding bucket of a `takeAll` (the one that refused, or has the fewest tokens left). */
  bucket?: string;
}

/**
 * Per-key limiting as a token bucket: capacity = ratePerMinute (a full minute's burst), refilled continuously at
 * ratePerMinute / 60 tokens a second; a take costs one token (a request, for requests per minute) or as many as
 * it asks (a request's tokens, for tokens per minute); an unseen bucket starts full; a rate change clamps the
 * stored tokens to the new capacity; a rate <= 0 refuses everything.
 */
export interface RateLimiter {
  take(bucket: string, ratePerMinute: number): Promise<RateDecision>;
  /**
   * `tokens` (default one) from each of several buckets at once, or from none: a request counted against a
   * sub-account and its account is refused by either without spending the other's tokens. The decision reports the
   * binding bucket (the fewest tokens left; when refused, the longest wait). A take larger than a bucket's capacity
   * can never succeed; callers refuse such a request themselves rather than promise a retry.
   */
  takeAll(buckets: readonly BucketLimit[], tokens?: number): Promise<RateDecision>;
  /**
   * Puts `tokens` back into each bucket (a request that used fewer tokens than it was admitted for), never above
   * its capacity. Negative `tokens` take what a request used beyond its admission, without refusal: the bucket may
   * go below zero, down to minus its capacity (a minute's debt at most), and later takes wait for it to refill.
   */
  giveBack(buckets: readonly BucketLimit[], tokens: number): Promise<void>;
  /** Fails when a shared store behind the limiter (Redis) does not answer; absent for the in-process one. */
  ping?(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Below one request a minute a capacity equal to the rate could never hold a whole token, so it would refuse
 * forever while promising a retry; one token is the smallest bucket that keeps the promise.
 */
export function bucketCapacity(ratePerMinute: number): number {
  return Math.max(1, ratePerMinute);
}

/** Milliseconds an empty bucket takes to fill: 60 s for any rate of at least one a minute. */
export function fullRefillMs(ratePerMinute: number): number {
  return (60_000 * bucketCapacity(ratePerMinute)) / ratePerMinute;
}

/** Absorbs float drift from summing small refills, so 0.9999999999 tokens count as the 1 they should be. */
export const TOKEN_EPSILON = 1e-9;

/** NaN counts as non-positive: a misconfigured rate refuses rather than lets everything through. */
export function refusesAll(ratePerMinute: number): boolean {
  return !(ratePerMinute > 0);
}

export function refusedForRate(): RateDecision {
  return { allowed: false, retryAfterSeconds: 60, remaining: 0, limit: 0 };
}

export function decision(
  allowed: boolean,
  remaining: number,
  retryAfterMs: number,
  limit: number,
): RateDecision {
  return {
    allowed,
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(retryAfterMs / 1000)),
    remaining: Math.max(0, Math.floor(remaining + TOKEN_EPSILON)),
    limit,
  };
}
