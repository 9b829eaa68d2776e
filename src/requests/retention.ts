import { expiredBodies } from '../../projections/requests/queries.ts';
import type { Sql } from '../../projections/types.ts';
import { removeBodies } from '../billing/request-bodies.ts';
import type { BlobStore } from '../files/blob-store.ts';

/** Hashes looked at per run; the rest wait for the next run. */
const LIMIT = 100_000;

export interface Retention {
  /** The gateway's days (GATEWAY_REQUEST_RETENTION_DAYS). */
  days: number;
  /** Accounts with days of their own. */
  overrides: Record<string, number>;
}

/**
 * Deletes the bodies whose every request is past its account's retention at `now`. Events are never touched: the
 * log keeps each body's hash, so the chain still proves what was served, and the metadata stays readable. Returns
 * how many were deleted.
 */
export async function deleteExpiredBodies(
  sql: Sql,
  blobs: BlobStore,
  now: Date,
  retention: Retention,
): Promise<number> {
  const expired = await expiredBodies(sql, now, retention.days, retention.overrides, LIMIT);
  return removeBodies({ sql, blobs }, expired);
}

/** The retention worker: once an hour (and soon after start), bodies past their retention are deleted. */
export function startRetentionWorker(options: {
  sql: Sql;
  blobs: BlobStore;
  retentionDays: number;
  overrides: () => Record<string, number>;
  clock: () => Date;
  log: (line: string) => void;
  intervalMs?: number;
}): { stop(): void } {
  const run = () => {
    const retention = { days: options.retentionDays, overrides: options.overrides() };
    deleteExpiredBodies(options.sql, options.blobs, options.clock(), retention).then(
      (n) => {
        if (n > 0) options.log(`request log retention: deleted ${n} bodies`);
      },
      (error) => options.log(`request log retention failed: ${(error as Error).message}`),
    );
  };
  const timer = setInterval(run, options.intervalMs ?? 60 * 60 * 1000);
  timer.unref();
  const first = setTimeout(run, 5_000);
  first.unref();
  return {
    stop: () => {
      clearInterval(timer);
      clearTimeout(first);
    },
  };
}
