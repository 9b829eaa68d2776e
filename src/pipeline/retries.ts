import { errors } from 'undici';
import { RequestRefused } from '../contracts/errors.ts';
import { UpstreamError } from '../providers/errors.ts';
import type { PipelineDeps } from './types.ts';

const RATE_LIMIT_RETRIES = 2;

/**
 * Runs one upstream call, recording each attempt in the provider's health window and waiting out the provider's
 * own Retry-After (within bounds) on a 429. Any other failure is the caller's to judge (a fallback, or the client).
 */
export async function withRetries<T>(
  deps: Pick<PipelineDeps, 'health' | 'maxRetryWaitMs'>,
  provider: string,
  call: () => Promise<T>,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const started = performance.now();
    try {
      const result = await call();
      deps.health.record(provider, performance.now() - started, true);
      return result;
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      deps.health.record(provider, performance.now() - started, false);
      const wait = error.retryAfterMs ?? 250 * 2 ** attempt;
      if (error.failure !== 'rate_limited' || attempt >= RATE_LIMIT_RETRIES || wait > deps.maxRetryWaitMs) {
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** Whether a failure is worth trying the next candidate model for. */
export function retryable(error: unknown): boolean {
  return error instanceof UpstreamError && error.retryable;
}

/** An upstream failure as the client sees it. */
export function clientError(error: unknown, model: string): unknown {
  // A connection that breaks while a response is being read fails inside the HTTP client, not as a status.
  if (error instanceof errors.UndiciError) {
    return new RequestRefused(
      'upstream_failed',
      `The provider's connection broke: ${model}: ${error.message}`,
    );
  }
  if (!(error instanceof UpstreamError)) return error;
  const where = `${model}: ${error.message}`;
  switch (error.failure) {
    case 'rate_limited': {
      const seconds = Math.max(1, Math.ceil((error.retryAfterMs ?? 1000) / 1000));
      return new RequestRefused('rate_limited', `The provider is rate limiting ${where}`, {
        'retry-after': String(seconds),
      });
    }
    case 'timeout':
      return new RequestRefused('upstream_timeout', `The provider timed out: ${where}`);
    case 'client':
      return new RequestRefused('invalid', `The provider refused the request: ${where}`);
    case 'server':
    case 'network':
    case 'unavailable':
      return new RequestRefused('upstream_failed', `The provider failed: ${where}`);
    default: {
      const _exhaustive: never = error.failure;
      return _exhaustive;
    }
  }
}
