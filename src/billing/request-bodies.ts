import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import type { Sql } from '../../projections/types.ts';
import type { BlobStore } from '../files/blob-store.ts';

const gunzipped = promisify(gunzip);

/**
 * The request log's bodies, keyed by the SHA-256 of their JSON. A table beside the read models rather than a file
 * each: creating a small file costs this kind of machine 0.5-1.5 ms of CPU (directory, temporary name, rename, the
 * thread pool's wake-ups), more than the rest of the request, where one multi-row INSERT stores every body that
 * arrived meanwhile. PostgreSQL compresses the large ones itself (TOAST). Every instance over one database reads
 * every other's bodies.
 */
export const BODY_TABLE = `CREATE TABLE IF NOT EXISTS request_bodies (
  sha256 text PRIMARY KEY,
  body text NOT NULL,
  stored_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS request_bodies_meta (
  key text PRIMARY KEY,
  value text NOT NULL
)`;

/** The mark, in request_bodies_meta, that every body of earlier versions has been moved out of the blob store. */
export const LEGACY_MOVED = 'legacy_bodies_moved';

/** Where bodies are read from: the table, and the blob store for those written before the table existed. */
export interface BodySource {
  sql: Sql;
  blobs: BlobStore;
  /** Told the hashes this process deletes, so that the next request with one of those bodies stores it again. */
  forget?: (sha256s: readonly string[]) => void;
}

/** Where a body written by earlier versions is kept: a gzipped blob, content-addressed. */
export function legacyBodyKey(sha256: string): string {
  return `requests/${sha256.slice(0, 2)}/${sha256}.json.gz`;
}

/** The JSON of a body and its SHA-256, the way the log hashes it. */
export function bodyJson(body: unknown): { json: string; sha256: string } {
  const json = JSON.stringify(body);
  return { json, sha256: createHash('sha256').update(json).digest('hex') };
}

/** Pools that have seen the mark: it is never taken back, so once seen it is not asked for again. */
const movedSeen = new WeakSet<Sql>();

/**
 * Whether the bodies of earlier versions have all been moved into the table (`src/requests/legacy-bodies.ts`):
 * from then on nothing looks in the blob store for a body.
 */
export async function legacyBodiesMoved(sql: Sql): Promise<boolean> {
  if (movedSeen.has(sql)) return true;
  try {
    const { rows } = await sql.query('SELECT 1 FROM request_bodies_meta WHERE key = $1', [LEGACY_MOVED]);
    if (rows.length === 0) return false;
  } catch {
    // A database the gateway has not yet set up has no mark, and no table to read bodies from either.
    return false;
  }
  movedSeen.add(sql);
  return true;
}

async function storedBodyJson(sql: Sql, sha256: string): Promise<string | undefined> {
  const { rows } = await sql.query<{ body: string }>('SELECT body FROM request_bodies WHERE sha256 = $1', [
    sha256,
  ]);
  return rows[0]?.body;
}

/**
 * The JSON of a body written by earlier versions, unchecked: undefined when there is no blob, null when the blob
 * does not gunzip. A failure to read the blob store is thrown: it says nothing about the body.
 */
export async function readLegacyBody(blobs: BlobStore, sha256: string): Promise<string | null | undefined> {
  const key = legacyBodyKey(sha256);
  if ((await blobs.size(key)) === undefined) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of blobs.read(key)) chunks.push(chunk as Buffer);
  try {
    return (await gunzipped(Buffer.concat(chunks))).toString('utf8');
  } catch {
    return null;
  }
}

/** The stored JSON of a body, or undefined when it was never kept or has been deleted. Not checked here. */
export async function readBodyJson(source: BodySource, sha256: string): Promise<string | undefined> {
  const stored = await storedBodyJson(source.sql, sha256);
  if (stored !== undefined || (await legacyBodiesMoved(source.sql))) return stored;
  const legacy = await readLegacyBody(source.blobs, sha256).catch(() => undefined);
  // The move may have taken it from the blob store into the table between the two reads.
  return legacy ?? (await storedBodyJson(source.sql, sha256));
}

/** Deletes these bodies from the table (never the blob store); returns the hashes it held. */
export async function removeStoredBodies(sql: Sql, sha256s: readonly string[]): Promise<string[]> {
  if (sha256s.length === 0) return [];
  const { rows } = await sql.query<{ sha256: string }>(
    'DELETE FROM request_bodies WHERE sha256 = ANY($1::text[]) RETURNING sha256',
    [sha256s],
  );
  return rows.map((r) => r.sha256);
}

/**
 * Deletes these bodies from the table unless one was stored or sent again within STORED_GRACE before `now`: the
 * check is in the DELETE itself, so a body sent again after retention chose it is kept.
 */
export async function removeUnrenewedBodies(
  sql: Sql,
  sha256s: readonly string[],
  now: Date,
): Promise<string[]> {
  if (sha256s.length === 0) return [];
  const { rows } = await sql.query<{ sha256: string }>(
    `DELETE FROM request_bodies WHERE sha256 = ANY($1::text[]) AND stored_at < $2::timestamptz - $3::interval
     RETURNING sha256`,
    [sha256s, now, STORED_GRACE],
  );
  return rows.map((r) => r.sha256);
}

/** Deletes the bodies with these hashes, wherever they are kept; returns how many there were. */
export async function removeBodies(source: BodySource, sha256s: readonly string[]): Promise<number> {
  if (sha256s.length === 0) return 0;
  try {
    return await removeEverywhere(source, sha256s);
  } finally {
    // After the deletion, so that a request with one of these bodies sent meanwhile (and deleted with it) does
    // not keep the next from storing it again.
    source.forget?.(sha256s);
  }
}

async function removeEverywhere(source: BodySource, sha256s: readonly string[]): Promise<number> {
  const gone = new Set(await removeStoredBodies(source.sql, sha256s));
  const rest = sha256s.filter((sha) => !gone.has(sha));
  if (rest.length === 0 || (await legacyBodiesMoved(source.sql))) return gone.size;
  let removed = gone.size;
  for (const sha of rest) {
    const key = legacyBodyKey(sha);
    if ((await source.blobs.size(key)) === undefined) continue;
    await source.blobs.remove(key);
    removed++;
  }
  // The move may have copied one into the table meanwhile; it checks the blob is still there after copying, so
  // a copy made after this second delete is undone by the move itself.
  await removeStoredBodies(source.sql, rest);
  return removed;
}

/** Bytes of bodies waiting to be stored; past it a body is not stored (its hash is still logged). */
const MAX_QUEUED_BYTES = 64 * 1024 * 1024;
/** At most this much JSON in one INSERT; a larger body goes alone. */
const MAX_STATEMENT_BYTES = 4 * 1024 * 1024;
/** Rows in one INSERT: two parameters each, within PostgreSQL's 65,535. */
const MAX_ROWS = 10_000;
/** Pauses before each new attempt at a batch whose INSERT failed; after the last, its bodies are given up. */
const RETRY_DELAYS_MS = [250, 1_000, 4_000];
/**
 * How long an idle writer waits for more bodies before it sends the first: at light load each request's bodies
 * would otherwise be a statement of their own, and a write to PostgreSQL's socket is dear on a small machine.
 */
const BATCH_WINDOW_MS = 10;
/**
 * Hashes sent to the table lately: the same body (a repeated prompt, an identical answer) is sent at most once
 * in RECENT_MS, by each instance. The time bound is what lets a body deleted elsewhere (by another instance's
 * `DELETE /v1/responses`) be stored again by the next request that carries it, RECENT_MS later at the latest;
 * deletions in this process are forgotten at once (`forget`).
 */
const RECENT = 10_000;
const RECENT_MS = 60_000;
/**
 * Sending a body again marks it as stored now (`stored_at`), at most once a minute, and retention leaves alone
 * what was stored within STORED_GRACE: a request whose body is identical to an expired one's, which the request
 * log has not shown yet, keeps its body (`projections/requests/queries.ts`, `expiredBodies`).
 */
export const STORED_GRACE = '1 hour';

/**
 * Stores bodies in the background: the answer never waits for them. One INSERT is in flight at a time and takes
 * every body queued meanwhile, so at any rate a body costs a row, not a statement. Its commit does not wait for
 * the WAL flush: the event holds the hash, so a body lost in a crash, or not stored under overload, is reported
 * missing, never wrong.
 */
export class RequestBodies {
  /** Hash -> when it was last sent to the table (ms), oldest first. */
  private readonly recent = new Map<string, number>();
  private queue: { sha256: string; json: string }[] = [];
  private queuedBytes = 0;
  private writing = false;
  private window: NodeJS.Timeout | undefined;
  private skipped = 0;
  /** Failed attempts in a row at the batch at the head of the queue. */
  private failures = 0;
  private drained: (() => void)[] = [];

  constructor(
    private readonly sql: Sql,
    /** Whether an account's bodies are kept: its own setting, else the gateway's. */
    readonly keeps: (accountId: string) => boolean,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  async init(): Promise<void> {
    await this.sql.query(BODY_TABLE);
  }

  /** Hashes the body and, when bodies are kept, queues it for the table. */
  save(body: unknown, keep: boolean): string | null {
    if (body === undefined) return null;
    const { json, sha256 } = bodyJson(body);
    const now = Date.now();
    const sent = this.recent.get(sha256);
    if (keep && (sent === undefined || now - sent > RECENT_MS)) {
      if (this.queuedBytes + json.length > MAX_QUEUED_BYTES) {
        if (this.skipped++ % 1000 === 0)
          this.onError(new Error('request bodies are arriving faster than they can be stored; some are not'));
        return sha256;
      }
      this.remember(sha256, now);
      this.queue.push({ sha256, json });
      this.queuedBytes += json.length;
      if (!this.writing && this.window === undefined) {
        this.window = setTimeout(() => this.pump(), BATCH_WINDOW_MS);
        this.window.unref();
      }
    }
    return sha256;
  }

  /** Resolves once every queued body is written: a shutdown must not close the pool under a write. */
  drain(): Promise<void> {
    if (!this.writing && this.queue.length === 0) return Promise.resolve();
    const drained = new Promise<void>((resolve) => this.drained.push(resolve));
    if (this.window !== undefined) this.pump();
    return drained;
  }

  /** Deleted bodies: the next request that carries one stores it again. */
  forget(sha256s: readonly string[]): void {
    for (const sha256 of sha256s) this.recent.delete(sha256);
  }

  private remember(sha256: string, now: number): void {
    this.recent.delete(sha256);
    this.recent.set(sha256, now);
    if (this.recent.size > RECENT) {
      const oldest = this.recent.keys().next().value;
      if (oldest !== undefined) this.recent.delete(oldest);
    }
  }

  private pump(): void {
    clearTimeout(this.window);
    this.window = undefined;
    if (this.writing) return;
    if (this.queue.length === 0) {
      for (const resolve of this.drained.splice(0)) resolve();
      return;
    }
    let bytes = 0;
    let count = 0;
    while (
      count < Math.min(this.queue.length, MAX_ROWS) &&
      (count === 0 || bytes + (this.queue[count]?.json.length ?? 0) <= MAX_STATEMENT_BYTES)
    )
      bytes += this.queue[count++]?.json.length ?? 0;
    const batch = this.queue.splice(0, count);
    this.queuedBytes -= bytes;
    this.writing = true;
    this.insert(batch)
      .then(
        () => {
          this.failures = 0;
        },
        async (error) => {
          // The database away for a moment (a restart, a failover) must not cost every body of the batch: it
          // goes back to the head of the queue and is tried again after a growing pause, up to RETRY_DELAYS_MS.
          const delay = RETRY_DELAYS_MS[this.failures++];
          if (delay === undefined) {
            this.failures = 0;
            for (const { sha256 } of batch) this.recent.delete(sha256);
            this.onError(error);
            return;
          }
          this.queue.unshift(...batch);
          this.queuedBytes += bytes;
          await new Promise((resolve) => setTimeout(resolve, delay));
        },
      )
      .finally(() => {
        this.writing = false;
        this.pump();
      });
  }

  private async insert(batch: { sha256: string; json: string }[]): Promise<void> {
    // Plain parameters, not arrays: a body is sent as it is, with no escaping pass over megabytes of JSON.
    const values: string[] = [];
    const rows: string[] = [];
    // One row a hash: ON CONFLICT DO UPDATE refuses a statement that would update one row twice.
    const seen = new Set<string>();
    for (const { sha256, json } of batch) {
      if (seen.has(sha256)) continue;
      seen.add(sha256);
      rows.push(`($${values.length + 1}, $${values.length + 2})`);
      values.push(sha256, json);
    }
    // set_config(..., true) lasts to the end of this statement's own transaction: its commit skips the WAL flush.
    await this.sql.query(
      `WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true))
       INSERT INTO request_bodies (sha256, body)
       SELECT v.sha256, v.body FROM relaxed, (VALUES ${rows.join(', ')}) AS v (sha256, body)
       ON CONFLICT (sha256) DO UPDATE SET stored_at = now()
         WHERE request_bodies.stored_at < now() - interval '1 minute'`,
      values,
    );
  }
}
