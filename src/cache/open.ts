import type pg from 'pg';
import type { EventStore } from '../../events/store.ts';
import type { Catalog } from '../catalog/types.ts';
import type { PipelineDeps } from '../pipeline/types.ts';
import { ResponseCache } from './cache.ts';
import { CacheEmbedder } from './embedder.ts';
import type { CacheMode } from './mode.ts';
import { PostgresCacheStore } from './postgres.ts';
import { RedisCacheStore } from './redis.ts';

export interface CacheOptions {
  ttlMs: number;
  threshold: number;
  embeddingModel: string | undefined;
  redisUrl: string | undefined;
  /** The account's `cache_default` setting, from the live state. */
  accountDefault?: (accountId: string) => CacheMode | undefined;
}

/**
 * The response cache where the deployment keeps its shared state: Redis when REDIS_URL is set, else PostgreSQL
 * tables. A semantic model that is not an embedding model of the catalog, or cannot be reached, is reported at
 * start and the cache looks up exactly only (the header says so on `semantic` requests).
 */
export async function openResponseCache(
  options: CacheOptions,
  pool: pg.Pool,
  events: EventStore,
  deps: Pick<PipelineDeps, 'env' | 'timeoutMs' | 'health' | 'maxRetryWaitMs'> & { catalog: Catalog },
  log: (line: string) => void,
  clock?: () => Date,
): Promise<ResponseCache> {
  let store: PostgresCacheStore | RedisCacheStore;
  if (options.redisUrl) store = new RedisCacheStore(options.redisUrl);
  else {
    store = new PostgresCacheStore(pool);
    await store.init();
  }
  const embedder = CacheEmbedder.open(options.embeddingModel, deps);
  if (typeof embedder === 'string')
    log(`GATEWAY_CACHE_EMBEDDING_MODEL: ${embedder}; the cache looks up exactly only`);
  return new ResponseCache(
    store,
    { ttlMs: options.ttlMs, threshold: options.threshold, accountDefault: options.accountDefault },
    events,
    typeof embedder === 'string' ? undefined : embedder,
    quietly(log),
    clock,
  );
}

/** The cache's failures, logged once per 10 s each: a store that is away would otherwise log every request. */
function quietly(log: (line: string) => void): (message: string, error: unknown) => void {
  const last = new Map<string, number>();
  return (message, error) => {
    const now = Date.now();
    if (now - (last.get(message) ?? 0) < 10_000) return;
    last.set(message, now);
    log(`${message}: ${String(error)}`);
  };
}
