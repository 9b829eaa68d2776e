import { z } from 'zod';

/**
 * Events of the `cache-{accountId}` stream. Cached answers themselves are not events (they are a cache: dropped,
 * expired, never needed to rebuild anything); dropping them on request is a fact worth keeping.
 */

export const CachePurged = z.object({
  accountId: z.string(),
  /** The sub-account whose entries went; null when the account's key purged it and all its sub-accounts'. */
  subAccountId: z.string().nullable(),
  keyId: z.string(),
  requestId: z.string(),
  /** Exact entries dropped (each semantic entry is one of them). */
  entries: z.number().int().nonnegative(),
});

export const cacheEventSchemas = { CachePurged } as const;

export type CacheEvent = { type: 'CachePurged'; data: z.infer<typeof CachePurged> };

export const cacheStream = (accountId: string) => `cache-${accountId}`;
