import type { Redis } from 'ioredis';
import { RequestPathRedis } from '../db/redis.ts';
import {
  bucketCapacity,
  decision,
  fullRefillMs,
  type RateDecision,
  type RateLimiter,
  refusedForRate,
  refusesAll,
  TOKEN_EPSILON,
} from './rate-limiter.ts';

/**
 * KEYS[1] bucket hash {tokens, ts (µs)}; ARGV rate per minute, capacity, TTL ms.
 * Returns {allowed 1|0, whole tokens remaining, ms until one token}.
 * Time is Redis's own TIME so gateway instances with skewed clocks agree; before Redis 5 a script must switch
 * to effects replication before writing after a non-deterministic command (a no-op on 7, absent before 3.2).
 * Numbers are written with %.17g because Lua's default %.14g would truncate a microsecond timestamp.
 */
const TAKE_SCRIPT = `
if redis.replicate_commands then redis.replicate_commands() end
local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local per_us = rate / 60000000
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil or ts == nil then
  tokens = capacity
else
  tokens = math.min(capacity, tokens + math.max(0, now - ts) * per_us)
end
local allowed = 0
local retry_ms = 0
if tokens >= 1 - ${TOKEN_EPSILON} then
  allowed = 1
  tokens = math.max(0, tokens - 1)
else
  retry_ms = math.ceil((1 - tokens) / per_us / 1000)
end
redis.call('HMSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'ts', string.format('%.17g', now))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {allowed, math.floor(tokens + ${TOKEN_EPSILON}), retry_ms}
`;

/** A key idle this long past a full refill has expired as full, which is what a fresh bucket is. */
const EXPIRY_MARGIN_MS = 1_000;
/** Far above a take's usual round trip (well under a millisecond), far below what a client would notice. */
const COMMAND_TIMEOUT_MS = 250;

interface TakeCommand {
  gwRateLimitTake(
    key: string,
    rate: string,
    capacity: string,
    ttlMs: string,
  ): Promise<[number, number, number]>;
}

/** Buckets in Redis, shared by every gateway instance pointing at the same Redis and prefix. */
export class RedisRateLimiter implements RateLimiter {
  private readonly connection: RequestPathRedis;
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly keyPrefix = 'gw:rl:',
  ) {
    this.connection = new RequestPathRedis(url, COMMAND_TIMEOUT_MS);
    this.redis = this.connection.client;
    // defineCommand runs EVALSHA and falls back to EVAL when the server lacks the script.
    this.redis.defineCommand('gwRateLimitTake', { numberOfKeys: 1, lua: TAKE_SCRIPT });
  }

  async take(bucket: string, ratePerMinute: number): Promise<RateDecision> {
    if (refusesAll(ratePerMinute)) return refusedForRate();
    // Before the first connection, takes queue (the gateway has just started); after it, a lost connection is
    // not waited for.
    const away = this.connection.unavailable();
    if (away) throw new Error(`Redis is ${away}`);
    const ttlMs = Math.ceil(fullRefillMs(ratePerMinute)) + EXPIRY_MARGIN_MS;
    const [allowed, remaining, retryMs] = await (this.redis as unknown as TakeCommand).gwRateLimitTake(
      this.keyPrefix + bucket,
      String(ratePerMinute),
      String(bucketCapacity(ratePerMinute)),
      String(ttlMs),
    );
    return decision(allowed === 1, remaining, retryMs, ratePerMinute);
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  close(): Promise<void> {
    return this.connection.close();
  }
}
