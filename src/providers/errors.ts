/** How an upstream call failed, as far as the client and the retry logic care. */
export type UpstreamFailure = 'server' | 'timeout' | 'rate_limited' | 'client' | 'network' | 'unavailable';

export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';
  constructor(
    readonly failure: UpstreamFailure,
    message: string,
    readonly status?: number,
    /** From the provider's Retry-After, when it gave one. */
    readonly retryAfterMs?: number,
    /** The provider's own error code or type (`insufficient_quota`, `billing_error`), when its body named one. */
    readonly code?: string,
  ) {
    super(message);
  }

  /** Worth another attempt, on the same model after a wait or on a fallback model. */
  get retryable(): boolean {
    return (
      this.failure === 'server' ||
      this.failure === 'timeout' ||
      this.failure === 'rate_limited' ||
      this.failure === 'network'
    );
  }
}

/** Retry-After is seconds or an HTTP date. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Maps an upstream HTTP status to a failure kind. */
export function failureOf(status: number): UpstreamFailure {
  if (status === 429) return 'rate_limited';
  if (status === 408 || status === 504) return 'timeout';
  if (status >= 500) return 'server';
  return 'client';
}
