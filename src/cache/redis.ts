import type { Redis } from 'ioredis';
import { RequestRefused } from '../contracts/errors.ts';
import { RequestPathRedis } from '../db/redis.ts';
import type { CacheEntry, CacheStore, StoredVector } from './entry.ts';
import { vectorBytes, vectorOf } from './entry.ts';

const PREFIX = 'gw:cache:';
const COMMAND_TIMEOUT_MS = 1000;
/** Glob metacharacters in an id would widen a SCAN pattern. */
const glob = (text: string) => text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);

/**
 * Entries in Redis when REDIS_URL is set: each entry a string with its own expiry, each scope's vectors a list
 * (its index is the sequence an instance reads from), and a generation per account that a purge raises.
 */
export class RedisCacheStore implements CacheStore {
  private readonly connection: RequestPathRedis;
  private readonly redis: Redis;

  constructor(url: string) {
    this.connection = new RequestPathRedis(url, COMMAND_TIMEOUT_MS);
    this.redis = this.connection.client;
  }

  /**
   * A lookup waits on the request path: once connected, a Redis that is away fails the command at once (a miss)
   * rather than after the client's reconnect attempts, as the rate limiter does.
   */
  private ready(): void {
    const away = this.connection.unavailable();
    if (away) throw new RequestRefused('unavailable', `The response cache's Redis is ${away}`);
  }

  private entryKey = (scope: string, key: string) => `${PREFIX}e:${scope}:${key}`;
  private vectorsKey = (scope: string) => `${PREFIX}v:${scope}`;
  private generationKey = (accountId: string) => `${PREFIX}g:${accountId}`;

  async get(scope: string, key: string, now: number): Promise<CacheEntry | undefined> {
    this.ready();
    const text = await this.redis.get(this.entryKey(scope, key));
    if (text === null) return undefined;
    const entry = JSON.parse(text) as CacheEntry;
    return Date.parse(entry.expiresAt) > now ? entry : undefined;
  }

  // Redis forgets a key by its own clock: it is told how long the entry has left by the gateway's.
  async put(entry: CacheEntry, now: number): Promise<void> {
    this.ready();
    const ttlMs = Math.max(1, Date.parse(entry.expiresAt) - now);
    await this.redis.set(this.entryKey(entry.scope, entry.key), JSON.stringify(entry), 'PX', ttlMs);
  }

  async addVector(
    scope: string,
    _accountId: string,
    vector: Omit<StoredVector, 'seq'>,
    now: number,
  ): Promise<void> {
    this.ready();
    const record = JSON.stringify({
      group: vector.group,
      key: vector.key,
      expiresAtMs: vector.expiresAtMs,
      signs: vector.signs,
      vector: vectorBytes(vector.vector).toString('base64'),
    });
    const ttlMs = Math.max(1, vector.expiresAtMs - now);
    await this.redis
      .multi()
      .rpush(this.vectorsKey(scope), record)
      // Every entry lives as long, so the newest vector's expiry is the list's.
      .pexpire(this.vectorsKey(scope), ttlMs)
      .exec();
  }

  async vectorsSince(scope: string, seq: number, now: number): Promise<StoredVector[]> {
    this.ready();
    // Sequences start at 1 so that 0 means "none seen", as in the PostgreSQL store. A list shorter than what was
    // seen expired whole (a day without a store) and began again: read it from its start.
    const length = await this.redis.llen(this.vectorsKey(scope));
    const from = seq > length ? 0 : seq;
    const items = await this.redis.lrange(this.vectorsKey(scope), from, -1);
    return items.flatMap((item, i) => {
      const record = JSON.parse(item) as {
        group: string;
        key: string;
        expiresAtMs: number;
        vector: string;
        signs?: [number, number];
      };
      if (record.expiresAtMs <= now) return [];
      return [
        {
          seq: from + i + 1,
          group: record.group,
          key: record.key,
          vector: vectorOf(Buffer.from(record.vector, 'base64')),
          ...(record.signs && { signs: record.signs }),
          expiresAtMs: record.expiresAtMs,
        },
      ];
    });
  }

  async generation(accountId: string): Promise<number> {
    this.ready();
    return Number((await this.redis.get(this.generationKey(accountId))) ?? 0);
  }

  async purge(accountId: string, subAccountId: string | null): Promise<number> {
    this.ready();
    const scopes =
      subAccountId === null
        ? [`${glob(accountId)}:*`, `${glob(accountId)}/*`]
        : [`${glob(`${accountId}/${subAccountId}`)}:*`];
    let dropped = 0;
    for (const pattern of scopes) dropped += await this.unlinkMatching(`${PREFIX}e:${pattern}`);
    const vectorPatterns =
      subAccountId === null
        ? [glob(this.vectorsKey(accountId)), `${glob(this.vectorsKey(accountId))}/*`]
        : [glob(this.vectorsKey(`${accountId}/${subAccountId}`))];
    for (const pattern of vectorPatterns) await this.unlinkMatching(pattern);
    await this.redis.incr(this.generationKey(accountId));
    return dropped;
  }

  private async unlinkMatching(pattern: string): Promise<number> {
    let cursor = '0';
    let count = 0;
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) count += await this.redis.unlink(...keys);
    } while (cursor !== '0');
    return count;
  }

  // Redis expires entries itself; a vector list expires with its newest member.
  async sweep(): Promise<void> {}

  close(): Promise<void> {
    return this.connection.close();
  }
}
