import { MemoryRateLimiter } from './memory.ts';
import type { RateLimiter } from './rate-limiter.ts';
import { RedisRateLimiter } from './redis.ts';

/** Redis when configured, so all instances share buckets; otherwise each process counts on its own. */
export function openRateLimiter(redisUrl: string | undefined): RateLimiter {
  return redisUrl ? new RedisRateLimiter(redisUrl) : new MemoryRateLimiter();
}
