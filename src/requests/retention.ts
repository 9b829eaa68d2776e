import { expiredBodies } from '../../projections/requests/queries.ts';
import type { Sql } from '../../projections/types.ts';
import { bodyKey } from '../billing/request-log.ts';
import type { BlobStore } from '../files/blob-store.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Hashes looked at per run; the rest wait for the next run. */
const LIMIT = 100_000;

/**
 * Deletes the bodies no request since `before` refers to. Events are never touched: the log keeps each body's
 * hash, so the chain still proves what was served, and the metadata stays readable. Returns how many were deleted.
 */
export async function deleteExpiredBodies(sql: Sql, blobs: BlobStore, before: Date): Promise<number> {
  let deleted = 0;
  for (const sha of await expiredBodies(sql, before, LIMIT)) {
    const key = bodyKey(sha);
    if ((await blobs.size(key)) === undefined) continue;
    await blobs.remove(key);
    deleted++;
  }
  return deleted;
}

/** The retention worker: once an hour (and at start), bodies older than the retention are deleted. */
export function startRetentionWorker(options: {
  sql: Sql;
  blobs: BlobStore;
  retentionDays: number;
  clock: () => Date;
  log: (line: string) => void;
  intervalMs?: number;
}): { stop(): void } {
  const run = () => {
    const before = new Date(options.clock().getTime() - options.retentionDays * DAY_MS);
    deleteExpiredBodies(options.sql, options.blobs, before).then(
      (n) => {
        if (n > 0) options.log(`request log retention: deleted ${n} bodies`);
      },
      (error) => options.log(`request log retention failed: ${(error as Error).message}`),
    );
  };
  const timer = setInterval(run, options.intervalMs ?? 60 * 60 * 1000);
  timer.unref();
  setTimeout(run, 5_000).unref();
  return { stop: () => clearInterval(timer) };
}
