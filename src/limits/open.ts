import { MemoryRateLimiter } from './memory.ts';
import type { RateLimiter } from './rate-limiter.ts';
import { RedisRateLimiter } from './redis.ts';

/**
 * Redis when configured, so all instances share buckets (on Redis's own clock); otherwise each process counts on
 * its own, on `now` (the runtime's clock, which tests move).
 */
export function openRateLimiter(redisUrl: string | undefined, now?: () => number): RateLimiter {
  if (redisUrl) return new RedisRateLimiter(redisUrl);
  return new MemoryRateLimiter(now ? { now } : {});
}
