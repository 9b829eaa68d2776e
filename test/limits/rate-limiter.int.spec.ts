import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { MemoryRateLimiter } from '../../src/limits/memory.ts';
import { openRateLimiter } from '../../src/limits/open.ts';
import type { RateDecision, RateLimiter } from '../../src/limits/rate-limiter.ts';
import { RedisRateLimiter } from '../../src/limits/redis.ts';

interface Harness {
  limiter: RateLimiter;
  /** lets time pass: a fake clock for memory, real time for Redis (whose clock is its own TIME) */
  advance(ms: number): Promise<void>;
}

const prefix = () => `test:rl:${randomUUID()}:`;

const backends: { name: string; open: () => Harness }[] = [
  {
    name: 'memory',
    open() {
      let now = 1_700_000_000_000;
      return {
        limiter: new MemoryRateLimiter({ now: () => now }),
        advance: async (ms) => {
          now += ms;
        },
      };
    },
  },
  {
    name: 'redis',
    open: () => ({ limiter: new RedisRateLimiter(inject('redisUrl'), prefix()), advance: (ms) => sleep(ms) }),
  },
];

async function drainUntilRefused(
  limiter: RateLimiter,
  bucket: string,
  rate: number,
): Promise<{ allowed: number; refusal: RateDecision }> {
  for (let allowed = 0; ; allowed++) {
    const decision = await limiter.take(bucket, rate);
    if (!decision.allowed) return { allowed, refusal: decision };
  }
}

async function drain(limiter: RateLimiter, bucket: string, rate: number): Promise<number> {
  return (await drainUntilRefused(limiter, bucket, rate)).allowed;
}

describe.each(backends)('$name rate limiter', ({ open }) => {
  let limiter: RateLimiter;
  let advance: Harness['advance'];

  beforeEach(() => {
    ({ limiter, advance } = open());
  });
  afterEach(async () => {
    await limiter.close();
  });

  it('lets a fresh bucket burst exactly its rate, then refuses until a token refills', async () => {
    const decisions = [];
    for (let i = 0; i < 6; i++) decisions.push(await limiter.take('key', 5));
    expect(decisions.slice(0, 5)).toEqual(
      [4, 3, 2, 1, 0].map((remaining) => ({ allowed: true, retryAfterSeconds: 0, remaining, limit: 5 })),
    );
    const refused = decisions[5];
    expect(refused).toMatchObject({ allowed: false, remaining: 0, limit: 5 });
    // One token every 12 s; Redis's clock moved on by a few ms since the last take.
    expect(refused?.retryAfterSeconds).toBeGreaterThanOrEqual(11);
    expect(refused?.retryAfterSeconds).toBeLessThanOrEqual(12);
  });

  it('allows exactly the rate out of a concurrent burst', async () => {
    const decisions = await Promise.all(Array.from({ length: 30 }, () => limiter.take('key', 20)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(20);
    expect(decisions.filter((d) => !d.allowed).every((d) => d.retryAfterSeconds >= 1)).toBe(true);
  });

  it('refills continuously at rate / 60 tokens a second', async () => {
    // 600/min is 10 tokens/s, so ~150 ms surely refills one whole token even from just below zero.
    const { allowed, refusal } = await drainUntilRefused(limiter, 'key', 600);
    // Redis refills while the sequential takes run; memory's clock stands still.
    expect(allowed).toBeGreaterThanOrEqual(600);
    expect(allowed).toBeLessThan(700);
    expect(refusal).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    await advance(150);
    expect(await limiter.take('key', 600)).toMatchObject({ allowed: true, retryAfterSeconds: 0 });
  });

  it('keeps buckets apart', async () => {
    expect(await drain(limiter, 'a', 1)).toBe(1);
    expect(await limiter.take('b', 1)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('takes from several buckets at once or from none, and names the binding one', async () => {
    const both = [
      { bucket: 'sub', ratePerMinute: 2 },
      { bucket: 'account', ratePerMinute: 5 },
    ];
    expect(await limiter.takeAll(both)).toMatchObject({
      allowed: true,
      remaining: 1,
      limit: 2,
      bucket: 'sub',
    });
    expect(await limiter.takeAll(both)).toMatchObject({ allowed: true, remaining: 0, bucket: 'sub' });
    // The sub-account's bucket is empty: refused, and the account's keeps its tokens.
    expect(await limiter.takeAll(both)).toMatchObject({ allowed: false, limit: 2, bucket: 'sub' });
    expect(await drain(limiter, 'account', 5)).toBe(3);
    // Now the account's is empty too; a fresh sub-account of it is refused by the account's bucket.
    expect(
      await limiter.takeAll([
        { bucket: 'other-sub', ratePerMinute: 2 },
        { bucket: 'account', ratePerMinute: 5 },
      ]),
    ).toMatchObject({ allowed: false, limit: 5, bucket: 'account' });
    expect(await limiter.take('other-sub', 2)).toMatchObject({ allowed: true, remaining: 1 });
  });

  it('clamps stored tokens to a lowered rate, and does not grant a raised rate at once', async () => {
    expect(await limiter.take('key', 10)).toMatchObject({ allowed: true, remaining: 9, limit: 10 });
    expect(await limiter.take('key', 3)).toMatchObject({ allowed: true, remaining: 2, limit: 3 });
    expect(await drain(limiter, 'key', 3)).toBe(2);
    expect(await limiter.take('key', 10)).toMatchObject({ allowed: false, remaining: 0, limit: 10 });
  });

  it('takes many tokens from several buckets at once or from none, and waits for as many as were asked', async () => {
    const both = [
      { bucket: 'sub', ratePerMinute: 100 },
      { bucket: 'account', ratePerMinute: 1000 },
    ];
    expect(await limiter.takeAll(both, 60)).toMatchObject({
      allowed: true,
      remaining: 40,
      limit: 100,
      bucket: 'sub',
    });
    // 40 left of 100 a minute: 20 more take 12 s to refill.
    const refused = await limiter.takeAll(both, 60);
    expect(refused).toMatchObject({ allowed: false, remaining: 40, limit: 100, bucket: 'sub' });
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(11);
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(12);
    // The account's bucket lost only the 60 of the take that passed.
    expect(await limiter.takeAll([{ bucket: 'account', ratePerMinute: 1000 }], 940)).toMatchObject({
      allowed: true,
      remaining: 0,
    });
  });

  it('gives unused tokens back up to the capacity, and takes an overrun into a debt of at most a minute', async () => {
    const bucket = [{ bucket: 'key', ratePerMinute: 100 }];
    expect(await limiter.takeAll(bucket, 100)).toMatchObject({ allowed: true, remaining: 0 });
    await limiter.giveBack(bucket, 70);
    expect(await limiter.takeAll(bucket, 70)).toMatchObject({ allowed: true, remaining: 0 });
    await limiter.giveBack(bucket, 500);
    expect(await limiter.takeAll(bucket, 100)).toMatchObject({ allowed: true, remaining: 0 });
    // Used 250 more than admitted: the bucket owes 100 (a minute's worth), not 250.
    await limiter.giveBack(bucket, -250);
    const owing = await limiter.takeAll(bucket, 1);
    expect(owing).toMatchObject({ allowed: false, remaining: 0, limit: 100 });
    // 101 tokens at 100 a minute: 60.6 s.
    expect(owing.retryAfterSeconds).toBeGreaterThanOrEqual(60);
    expect(owing.retryAfterSeconds).toBeLessThanOrEqual(61);
  });

  it('refuses everything at a rate of zero or less, without touching the bucket', async () => {
    for (const rate of [0, -5, Number.NaN]) {
      expect(await limiter.take('key', rate)).toEqual({
        allowed: false,
        retryAfterSeconds: 60,
        remaining: 0,
        limit: 0,
      });
    }
    expect(await limiter.take('key', 5)).toMatchObject({ allowed: true, remaining: 4 });
  });
});

describe('redis rate limiter across instances', () => {
  const url = () => inject('redisUrl');
  const opened: RateLimiter[] = [];
  const limiterAt = (keyPrefix: string) => {
    const limiter = new RedisRateLimiter(url(), keyPrefix);
    opened.push(limiter);
    return limiter;
  };

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((limiter) => limiter.close()));
  });

  it('shares one bucket between two connections: exactly the rate is allowed in total', async () => {
    const keyPrefix = prefix();
    const [a, b] = [limiterAt(keyPrefix), limiterAt(keyPrefix)];
    const takes = Array.from({ length: 40 }, () => [a.take('key', 50), b.take('key', 50)]).flat();
    const decisions = await Promise.all(takes);
    expect(decisions.filter((d) => d.allowed)).toHaveLength(50);
  });

  it('keeps key prefixes apart', async () => {
    expect(await drain(limiterAt(prefix()), 'key', 2)).toBe(2);
    expect(await limiterAt(prefix()).take('key', 2)).toMatchObject({ allowed: true });
  });

  it('stores the bucket as a hash that expires a little after a full refill', async () => {
    const keyPrefix = prefix();
    await limiterAt(keyPrefix).take('key', 30);
    const redis = new Redis(url(), { maxRetriesPerRequest: 1 });
    try {
      const state = await redis.hgetall(`${keyPrefix}key`);
      expect(Number(state.tokens)).toBeCloseTo(29, 3);
      expect(Number(state.ts)).toBeGreaterThan(0);
      const ttl = await redis.pttl(`${keyPrefix}key`);
      expect(ttl).toBeGreaterThan(59_000);
      expect(ttl).toBeLessThanOrEqual(61_000);
    } finally {
      redis.disconnect();
    }
  });

  it('keeps a bucket in debt until it would be full again, past a full refill', async () => {
    const keyPrefix = prefix();
    const limiter = limiterAt(keyPrefix);
    await limiter.take('key', 30);
    // 29 left, 60 more used than admitted: a debt of 30 (the capacity), two minutes from full.
    await limiter.giveBack([{ bucket: 'key', ratePerMinute: 30 }], -60);
    const redis = new Redis(url(), { maxRetriesPerRequest: 1 });
    try {
      expect(Number((await redis.hgetall(`${keyPrefix}key`)).tokens)).toBeCloseTo(-30, 3);
      const ttl = await redis.pttl(`${keyPrefix}key`);
      expect(ttl).toBeGreaterThan(119_000);
      expect(ttl).toBeLessThanOrEqual(121_000);
    } finally {
      redis.disconnect();
    }
  });
});

describe('openRateLimiter', () => {
  it('opens Redis when given a URL and memory otherwise', async () => {
    const memory = openRateLimiter(undefined);
    const redis = openRateLimiter(inject('redisUrl'));
    try {
      expect(memory).toBeInstanceOf(MemoryRateLimiter);
      expect(redis).toBeInstanceOf(RedisRateLimiter);
    } finally {
      await Promise.all([memory.close(), redis.close()]);
    }
  });
});
