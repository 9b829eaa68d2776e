import { Redis } from 'ioredis';
import { expect, inject, it } from 'vitest';

it('provides a Redis (REDIS_URL, or a throwaway redis-server) that answers', async () => {
  const redis = new Redis(inject('redisUrl'), { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    expect(await redis.ping()).toBe('PONG');
  } finally {
    redis.disconnect();
  }
});
