import type pg from 'pg';
import type { EventStore } from '../../events/store.ts';
import { expiredBodies } from '../../projections/requests/queries.ts';
import type { Sql } from '../../projections/types.ts';
import { removeUnrenewedBodies, STORED_GRACE } from '../billing/request-bodies.ts';
import type { BlobStore } from '../files/blob-store.ts';
import { moveLegacyBodies } from './legacy-bodies.ts';

/** Hashes deleted per run at most; the rest wait for the next run. */
export const LIMIT = 100_000;

export interface Retention {
  /** The gateway's days (GATEWAY_REQUEST_RETENTION_DAYS). */
  days: number;
  /** Accounts with days of their own. */
  overrides: Record<string, number>;
}

/**
 * Deletes the bodies whose every request is past its account's retention at `now`, up to `limit` of them. Events
 * are never touched: the log keeps each body's hash, so the chain still proves what was served, and the metadata
 * stays readable. Only the table is looked at: bodies of earlier versions are moved into it first
 * (`legacy-bodies.ts`), expired or not, and deleted from there. A body stored or sent again within STORED_GRACE
 * stays whatever the log says: a new request with the body of an expired one may not be in the log yet.
 * Returns how many were deleted.
 */
export async function deleteExpiredBodies(
  sql: Sql,
  now: Date,
  retention: Retention,
  limit = LIMIT,
): Promise<number> {
  const expired = await expiredBodies(sql, now, retention.days, retention.overrides, limit, STORED_GRACE);
  return (await removeUnrenewedBodies(sql, expired, now)).length;
}

/**
 * The retention worker: once an hour (and soon after start), bodies past their retention are deleted. Until the
 * bodies of earlier versions are all moved out of the blob store, each run also moves them (in the background,
 * beside the deletions), and a move that completes is followed by a deletion run at once.
 */
export function startRetentionWorker(options: {
  sql: pg.Pool;
  blobs: BlobStore;
  store: EventStore;
  retentionDays: number;
  overrides: () => Record<string, number>;
  clock: () => Date;
  log: (line: string) => void;
  intervalMs?: number;
}): { stop(): void } {
  const stopped = new AbortController();
  let deleting = false;
  let again = false;
  let moving = false;
  let moved = false;
  const retain = () => {
    if (deleting) {
      again = true;
      return;
    }
    deleting = true;
    const retention = { days: options.retentionDays, overrides: options.overrides() };
    deleteExpiredBodies(options.sql, options.clock(), retention)
      .then(
        (n) => {
          if (n > 0) options.log(`request log retention: deleted ${n} bodies`);
        },
        (error) => {
          if (!stopped.signal.aborted)
            options.log(`request log retention failed: ${(error as Error).message}`);
        },
      )
      .finally(() => {
        deleting = false;
        if (again && !stopped.signal.aborted) {
          again = false;
          retain();
        }
      });
  };
  const move = () => {
    if (moved || moving) return;
    moving = true;
    moveLegacyBodies({
      pool: options.sql,
      blobs: options.blobs,
      store: options.store,
      signal: stopped.signal,
    })
      .then(
        (result) => {
          if (!result.done) return;
          moved = true;
          if (result.moved + result.unmatched === 0) return;
          options.log(
            `request log: moved ${result.moved} bodies of earlier versions from the blob store into the table` +
              (result.unmatched > 0 ? `, deleted ${result.unmatched} that did not match their hash` : ''),
          );
          retain();
        },
        (error) => {
          if (!stopped.signal.aborted)
            options.log(`moving request bodies out of the blob store failed: ${(error as Error).message}`);
        },
      )
      .finally(() => {
        moving = false;
      });
  };
  const run = () => {
    retain();
    move();
  };
  const timer = setInterval(run, options.intervalMs ?? 60 * 60 * 1000);
  timer.unref();
  const first = setTimeout(run, 5_000);
  first.unref();
  return {
    stop: () => {
      stopped.abort();
      clearInterval(timer);
      clearTimeout(first);
    },
  };
}
