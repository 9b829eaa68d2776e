import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { EventStore } from '../../events/store.ts';
import { requestsProjection } from '../../projections/requests/index.ts';
import { LEGACY_MOVED, legacyBodiesMoved, legacyBodyKey, readLegacyBody } from '../billing/request-bodies.ts';
import { withAdvisoryLock } from '../db/advisory-lock.ts';
import type { BlobStore } from '../files/blob-store.ts';
import { projectedUpTo } from '../projections/wait.ts';

/** The hashes still to look for in the blob store; listed once, emptied batch by batch. */
const TODO = `CREATE TABLE IF NOT EXISTS request_bodies_legacy (sha256 text PRIMARY KEY)`;
/** The mark that the list above is complete (a crash after it resumes from the list, not from the log). */
const LISTED = 'legacy_bodies_listed';
/** Hashes per batch, and blobs looked at at once within one (a blob store round-trip each). */
const BATCH = 200;
const PARALLEL = 8;
/** How long the request log may take to reach the log's end before the move waits for a later run. */
const CATCH_UP_MS = 60_000;

export interface LegacyMove {
  /** Whether every body of earlier versions is out of the blob store (now, or by an earlier run). */
  done: boolean;
  /** Bodies moved into the table. */
  moved: number;
  /** Blobs deleted without being moved: they did not match their hash (reads never served them). */
  unmatched: number;
}

export interface LegacyMoveOptions {
  pool: pg.Pool;
  blobs: BlobStore;
  store: EventStore;
  signal?: AbortSignal;
  /** Hashes per batch; the default outside tests. */
  batch?: number;
}

/**
 * Moves the bodies earlier versions wrote as gzipped blobs into `request_bodies`, once: every hash the request log
 * holds with its bodies kept that the table lacks is looked for at `legacyBodyKey`; a blob that matches its hash
 * is copied into the table, and every blob found is then deleted. Once all are done a mark says so, and from then
 * on neither reads nor retention look in the blob store. One instance moves at a time (an advisory lock; another
 * finds it held and tries on its next run); a crash resumes from the list of hashes not yet looked at.
 */
export async function moveLegacyBodies(options: LegacyMoveOptions): Promise<LegacyMove> {
  const result: LegacyMove = { done: false, moved: 0, unmatched: 0 };
  if (await legacyBodiesMoved(options.pool)) return { ...result, done: true };
  // One instance moves at a time; a lost connection fails the move's next query, which the caller reports.
  await withAdvisoryLock(
    options.pool,
    'request_bodies_legacy',
    () => {},
    async () => {
      if (await legacyBodiesMoved(options.pool)) {
        result.done = true;
        return;
      }
      await options.pool.query(TODO);
      if (!(await listed(options.pool))) {
        // Every request of earlier versions must be in the read model first, or its body would be left behind.
        if (!(await requestLogCaughtUp(options.pool, options.store))) return;
        await options.pool.query(
          `WITH listed AS (
           INSERT INTO request_bodies_legacy (sha256)
           SELECT sha FROM (
             SELECT request_sha256 AS sha FROM request_log WHERE request_sha256 IS NOT NULL AND bodies_kept
             UNION
             SELECT response_sha256 FROM request_log WHERE response_sha256 IS NOT NULL AND bodies_kept
           ) AS bodies
           WHERE NOT EXISTS (SELECT 1 FROM request_bodies WHERE request_bodies.sha256 = bodies.sha)
           ON CONFLICT (sha256) DO NOTHING
           RETURNING 1
         )
         INSERT INTO request_bodies_meta (key, value) SELECT $1, count(*)::text FROM listed
         ON CONFLICT (key) DO NOTHING`,
          [LISTED],
        );
      }
      for (;;) {
        if (options.signal?.aborted) return;
        const { rows } = await options.pool.query<{ sha256: string }>(
          'SELECT sha256 FROM request_bodies_legacy ORDER BY sha256 LIMIT $1',
          [options.batch ?? BATCH],
        );
        if (rows.length === 0) break;
        const hashes = rows.map((r) => r.sha256);
        for (let i = 0; i < hashes.length; i += PARALLEL) {
          const outcomes = await Promise.all(
            hashes.slice(i, i + PARALLEL).map((sha) => moveOne(options, sha)),
          );
          for (const outcome of outcomes) if (outcome !== 'absent') result[outcome]++;
        }
        await options.pool.query('DELETE FROM request_bodies_legacy WHERE sha256 = ANY($1::text[])', [
          hashes,
        ]);
      }
      await options.pool.query(
        `INSERT INTO request_bodies_meta (key, value) VALUES ($1, now()::text) ON CONFLICT (key) DO NOTHING`,
        [LEGACY_MOVED],
      );
      await options.pool.query('DROP TABLE IF EXISTS request_bodies_legacy');
      result.done = true;
    },
  );
  return result;
}

async function listed(pool: pg.Pool): Promise<boolean> {
  const { rows } = await pool.query('SELECT 1 FROM request_bodies_meta WHERE key = $1', [LISTED]);
  return rows.length > 0;
}

/** Moves one body; a blob store that fails to answer throws, leaving the hash for the next run. */
async function moveOne(
  options: LegacyMoveOptions,
  sha256: string,
): Promise<'moved' | 'unmatched' | 'absent'> {
  const key = legacyBodyKey(sha256);
  const json = await readLegacyBody(options.blobs, sha256);
  if (json === undefined) return 'absent';
  if (json === null || createHash('sha256').update(json).digest('hex') !== sha256) {
    // Never served (reads check the hash), and nothing would look at it again: it goes, not into the table.
    await options.blobs.remove(key);
    return 'unmatched';
  }
  const { rows } = await options.pool.query(
    // Stored by an earlier version at a time no longer known, and not sent again: retention's grace does not apply.
    `INSERT INTO request_bodies (sha256, body, stored_at) VALUES ($1, $2, '-infinity')
     ON CONFLICT (sha256) DO NOTHING RETURNING 1`,
    [sha256, json],
  );
  if ((await options.blobs.size(key)) === undefined) {
    // Erased while it was being copied (removeBodies deletes the blob, then the table's row): the copy goes too.
    if (rows.length > 0) await options.pool.query('DELETE FROM request_bodies WHERE sha256 = $1', [sha256]);
    return 'absent';
  }
  await options.blobs.remove(key);
  return 'moved';
}

/**
 * Whether the request log has folded every event the log held a moment ago: the requests of earlier versions
 * are all there. False when it has not within a minute (a rebuild in progress, a lagging projection).
 */
async function requestLogCaughtUp(pool: pg.Pool, store: EventStore): Promise<boolean> {
  const { rows } = await pool.query<{ checkpoint: string }>(
    'SELECT checkpoint FROM projection_checkpoints WHERE name = $1',
    [requestsProjection.name],
  );
  const from = rows[0]?.checkpoint ?? '';
  let end = from;
  for (;;) {
    const page = await store.readAll(end, { maxCount: 1000 });
    end = page.at(-1)?.checkpoint ?? end;
    if (page.length < 1000) break;
  }
  if (end === from) return true;
  return projectedUpTo(pool, store, requestsProjection.name, end, CATCH_UP_MS);
}
