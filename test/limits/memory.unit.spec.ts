import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryRateLimiter } from '../../src/limits/memory.ts';

describe('MemoryRateLimiter on a fake clock', () => {
  let now: number;
  let limiter: MemoryRateLimiter;

  beforeEach(() => {
    now = 1_700_000_000_000;
    limiter = new MemoryRateLimiter({ now: () => now });
  });

  async function drain(bucket: string, rate: number): Promise<number> {
    let allowed = 0;
    while ((await limiter.take(bucket, rate)).allowed) allowed++;
    return allowed;
  }

  it('grants the next token exactly when it has refilled', async () => {
    expect(await drain('key', 60)).toBe(60);
    now += 999;
    expect(await limiter.take('key', 60)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    now += 1;
    expect(await limiter.take('key', 60)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('counts partial refills towards the retry-after, rounding up to whole seconds', async () => {
    expect(await drain('key', 6)).toBe(6);
    now += 4_000;
    expect(await limiter.take('key', 6)).toMatchObject({ allowed: false, retryAfterSeconds: 6 });
    now += 5_500;
    expect(await limiter.take('key', 6)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
  });

  it('accumulates many small refills into a whole token despite float drift', async () => {
    expect(await drain('key', 60)).toBe(60);
    // Ten float additions of 0.1 token land a hair under 1.
    for (let i = 0; i < 9; i++) {
      now += 100;
      expect((await limiter.take('key', 60)).allowed).toBe(false);
    }
    now += 100;
    expect((await limiter.take('key', 60)).allowed).toBe(true);
  });

  it('never refills beyond a minute of burst', async () => {
    expect(await drain('key', 10)).toBe(10);
    now += 3_600_000;
    expect(await drain('key', 10)).toBe(10);
  });

  it('holds at least one token below one request a minute, so a retry can succeed', async () => {
    expect(await limiter.take('key', 0.5)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await limiter.take('key', 0.5)).toMatchObject({ allowed: false, retryAfterSeconds: 120 });
    now += 120_000;
    expect((await limiter.take('key', 0.5)).allowed).toBe(true);
  });

  it('neither drains nor refills when the clock steps backwards', async () => {
    expect(await drain('key', 2)).toBe(2);
    now -= 60_000;
    expect(await limiter.take('key', 2)).toMatchObject({ allowed: false, retryAfterSeconds: 30 });
    now += 30_000;
    expect((await limiter.take('key', 2)).allowed).toBe(true);
  });

  it('evicts buckets that have been full for over two minutes, keeping busy ones', async () => {
    for (let i = 0; i < 100; i++) await limiter.take(`idle-${i}`, 60);
    // One token short at 1 token/s: full again 1 s from now.
    now += 121_000;
    await limiter.take('busy', 60);
    expect(limiter.size).toBe(101);
    now += 60_000;
    await limiter.take('busy', 60);
    expect(limiter.size).toBe(1);
  });

  it('keeps a bucket in debt until it has refilled past what it owes', async () => {
    const bucket = [{ bucket: 'key', ratePerMinute: 60 }];
    expect(await limiter.takeAll(bucket, 60)).toMatchObject({ allowed: true, remaining: 0 });
    await limiter.giveBack(bucket, -30);
    now += 30_000;
    expect(await limiter.takeAll(bucket, 1)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    now += 1_000;
    expect(await limiter.takeAll(bucket, 1)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('keeps a bucket that is still refilling, however long ago it was last taken from', async () => {
    expect(await drain('slow', 0.1)).toBe(1);
    now += 180_001;
    await limiter.take('other', 60);
    expect(limiter.size).toBe(2);
    expect((await limiter.take('slow', 0.1)).allowed).toBe(false);
  });
});
