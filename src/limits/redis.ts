import type { Redis } from 'ioredis';
import { RequestPathRedis } from '../db/redis.ts';
import {
  type BucketLimit,
  bucketCapacity,
  decision,
  fullRefillMs,
  type RateDecision,
  type RateLimiter,
  refusedForRate,
  refusesAll,
  TOKEN_EPSILON,
} from './rate-limiter.ts';

/** A key idle this long past a full refill has expired as full, which is what a fresh bucket is. */
const EXPIRY_MARGIN_MS = 1_000;
/** Far above a take's usual round trip (well under a millisecond), far below what a client would notice. */
const COMMAND_TIMEOUT_MS = 250;

/**
 * KEYS[i] a bucket hash {tokens, ts (µs)}; ARGV[1] the tokens, ARGV[2] `take` or `give`, then three per key: rate
 * per minute, capacity, TTL ms.
 * `take`: the tokens are taken from every bucket, or from none when any lacks them.
 * `give`: the tokens are added to every bucket (negative ones taken unconditionally), kept within ±capacity.
 * Returns {allowed 1|0, whole tokens left in the binding bucket, its index (1-based), ms until each has enough}.
 * Time is Redis's own TIME so gateway instances with skewed clocks agree; before Redis 5 a script must switch
 * to effects replication before writing after a non-deterministic command (a no-op on 7, absent before 3.2).
 * Numbers are written with %.17g because Lua's default %.14g would truncate a microsecond timestamp. A bucket in
 * debt (below zero) takes longer than a full refill to fill, so its key lives that much longer.
 */
const TAKE_SCRIPT = `
if redis.replicate_commands then redis.replicate_commands() end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local cost = tonumber(ARGV[1])
local give = ARGV[2] == 'give'
local levels = {}
local allowed = 1
for i = 1, #KEYS do
  local rate = tonumber(ARGV[i * 3])
  local capacity = tonumber(ARGV[i * 3 + 1])
  local per_us = rate / 60000000
  local state = redis.call('HMGET', KEYS[i], 'tokens', 'ts')
  local tokens = tonumber(state[1])
  local ts = tonumber(state[2])
  if tokens == nil or ts == nil then
    tokens = capacity
  else
    tokens = math.min(capacity, tokens + math.max(0, now - ts) * per_us)
  end
  if not give and tokens < cost - ${TOKEN_EPSILON} then allowed = 0 end
  levels[i] = {tokens, per_us, capacity}
end
local retry_ms = 0
local binding = 1
for i = 1, #KEYS do
  local level = levels[i]
  local tokens = level[1]
  if give then
    tokens = math.max(-level[3], math.min(level[3], tokens + cost))
  elseif allowed == 1 then
    tokens = math.max(0, tokens - cost)
  else
    retry_ms = math.max(retry_ms, math.ceil(math.max(0, cost - tokens) / level[2] / 1000))
  end
  level[1] = tokens
  if tokens < levels[binding][1] then binding = i end
  redis.call('HMSET', KEYS[i], 'tokens', string.format('%.17g', tokens), 'ts', string.format('%.17g', now))
  local refill_ms = math.ceil((level[3] - tokens) / level[2] / 1000) + ${EXPIRY_MARGIN_MS}
  redis.call('PEXPIRE', KEYS[i], math.max(tonumber(ARGV[i * 3 + 2]), refill_ms))
end
return {allowed, math.floor(levels[binding][1] + ${TOKEN_EPSILON}), binding, retry_ms}
`;

interface TakeCommand {
  gwRateLimitTakeAll(keyCount: number, ...keysThenArgs: string[]): Promise<[number, number, number, number]>;
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
    this.redis.defineCommand('gwRateLimitTakeAll', { lua: TAKE_SCRIPT });
  }

  async take(bucket: string, ratePerMinute: number): Promise<RateDecision> {
    const { bucket: _one, ...taken } = await this.takeAll([{ bucket, ratePerMinute }]);
    return taken;
  }

  async takeAll(buckets: readonly BucketLimit[], tokens = 1): Promise<RateDecision> {
    if (buckets.length === 0 || buckets.some((b) => refusesAll(b.ratePerMinute))) return refusedForRate();
    const [allowed, remaining, binding, retryMs] = await this.run(buckets, tokens, 'take');
    const bound = buckets[binding - 1] ?? buckets[0];
    return {
      ...decision(allowed === 1, remaining, retryMs, bound?.ratePerMinute ?? 0),
      bucket: bound?.bucket,
    };
  }

  async giveBack(buckets: readonly BucketLimit[], tokens: number): Promise<void> {
    const live = buckets.filter((b) => !refusesAll(b.ratePerMinute));
    if (live.length > 0 && tokens !== 0) await this.run(live, tokens, 'give');
  }

  private run(buckets: readonly BucketLimit[], tokens: number, mode: 'take' | 'give') {
    // Before the first connection, takes queue (the gateway has just started); after it, a lost connection is
    // not waited for.
    const away = this.connection.unavailable();
    if (away) return Promise.reject(new Error(`Redis is ${away}`));
    const args = buckets.flatMap(({ ratePerMinute }) => [
      String(ratePerMinute),
      String(bucketCapacity(ratePerMinute)),
      String(Math.ceil(fullRefillMs(ratePerMinute)) + EXPIRY_MARGIN_MS),
    ]);
    return (this.redis as unknown as TakeCommand).gwRateLimitTakeAll(
      buckets.length,
      ...buckets.map((b) => this.keyPrefix + b.bucket),
      String(tokens),
      mode,
      ...args,
    );
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  close(): Promise<void> {
    return this.connection.close();
  }
}
