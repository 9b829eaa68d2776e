import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { requestsProjection } from '../../projections/requests/index.ts';
import {
  bodyJson,
  legacyBodyKey,
  RequestBodies,
  readBodyJson,
  removeBodies,
} from '../../src/billing/request-bodies.ts';
import type { Database } from '../../src/db/database.ts';
import type { PostgresEventStore } from '../../src/eventstore/postgres/store.ts';
import { type BlobStore, FsBlobStore } from '../../src/files/blob-store.ts';
import { ensureProjectionTables } from '../../src/projections/tables.ts';
import { moveLegacyBodies } from '../../src/requests/legacy-bodies.ts';
import { loggedBody } from '../../src/requests/lookup.ts';
import { deleteExpiredBodies, startRetentionWorker } from '../../src/requests/retention.ts';
import { testDatabase, testStore } from '../support/database.ts';
import { eventually } from '../support/gateway.ts';

const NOW = new Date('2026-06-01T00:00:00Z');
const daysAgo = (days: number) => new Date(NOW.getTime() - days * 86_400_000);
const retention = { days: 1, overrides: {} };
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

/** The blob store with every call counted: after the move, retention and reads must make none. */
class CountingBlobs implements BlobStore {
  calls = 0;
  failReads = 0;
  constructor(private readonly inner: BlobStore) {}
  write(...args: Parameters<BlobStore['write']>) {
    this.calls++;
    return this.inner.write(...args);
  }
  read(key: string) {
    this.calls++;
    if (this.failReads > 0) {
      this.failReads--;
      throw new Error('the blob store did not answer');
    }
    return this.inner.read(key);
  }
  blob(key: string, type?: string) {
    this.calls++;
    return this.inner.blob(key, type);
  }
  size(key: string) {
    this.calls++;
    return this.inner.size(key);
  }
  remove(key: string) {
    this.calls++;
    return this.inner.remove(key);
  }
}

interface Setup {
  database: Database;
  pool: pg.Pool;
  store: PostgresEventStore;
  files: FsBlobStore;
  blobs: CountingBlobs;
  dir: string;
}

const opened: Setup[] = [];
const extraPools: pg.Pool[] = [];

async function setup(): Promise<Setup> {
  const database = await testDatabase();
  const dir = await mkdtemp(join(tmpdir(), 'gw-retention-'));
  await ensureProjectionTables(database.pool, [requestsProjection]);
  await new RequestBodies(database.pool, () => true).init();
  const store = await testStore(database);
  const files = new FsBlobStore(dir);
  const s = { database, pool: database.pool, store, files, blobs: new CountingBlobs(files), dir };
  opened.push(s);
  return s;
}

afterEach(async () => {
  for (const pool of extraPools.splice(0)) await pool.end();
  for (const s of opened.splice(0)) {
    await s.store.close();
    await s.database.close();
    await rm(s.dir, { recursive: true, force: true });
  }
});

/** One request of the log referring to these bodies, as the projection writes it. */
async function logRequest(
  pool: pg.Pool,
  createdAt: Date,
  requestSha: string | null,
  responseSha: string | null = null,
  bodiesKept = true,
): Promise<void> {
  await pool.query(
    `INSERT INTO request_log (log_id, request_id, account_id, key_id, endpoint, status, stream, cost_nanos,
       total_ms, attempts, fallbacks, request_sha256, response_sha256, bodies_kept, created_at)
     VALUES ($1, $2, 'acct_1', 'key_1', '/v1/chat/completions', 200, false, 0, 5, 1, 0, $3, $4, $5, $6)`,
    [`rlog_${randomUUID()}`, randomUUID(), requestSha, responseSha, bodiesKept, createdAt],
  );
}

async function storeBody(pool: pg.Pool, body: unknown): Promise<string> {
  const { json, sha256 } = bodyJson(body);
  // Stored long before the runs below, as a body retention deletes was.
  await pool.query('INSERT INTO request_bodies (sha256, body, stored_at) VALUES ($1, $2, $3)', [
    sha256,
    json,
    daysAgo(30),
  ]);
  return sha256;
}

async function inTable(pool: pg.Pool, sha256: string): Promise<boolean> {
  const { rows } = await pool.query('SELECT 1 FROM request_bodies WHERE sha256 = $1', [sha256]);
  return rows.length > 0;
}

async function writeLegacy(blobs: BlobStore, body: unknown): Promise<string> {
  const { json, sha256 } = bodyJson(body);
  await blobs.write(legacyBodyKey(sha256), gzipSync(json));
  return sha256;
}

describe('request log retention', () => {
  it('reaches a newly expired body however many expired bodies were deleted before', async () => {
    const { pool } = await setup();
    // Bodies deleted by earlier runs: their requests stay in the log, past retention, for good.
    for (let i = 0; i < 50; i++)
      await logRequest(pool, daysAgo(10), sha(`deleted ${i}`), sha(`deleted answer ${i}`));
    const fresh = await storeBody(pool, { prompt: 'expired today' });
    await logRequest(pool, daysAgo(2), fresh);
    // A body shared with a request still within retention stays.
    const shared = await storeBody(pool, { prompt: 'asked twice' });
    await logRequest(pool, daysAgo(10), shared);
    await logRequest(pool, NOW, shared);

    expect(await deleteExpiredBodies(pool, NOW, retention, 3)).toBe(1);
    expect(await inTable(pool, fresh)).toBe(false);
    expect(await inTable(pool, shared)).toBe(true);
    expect(await deleteExpiredBodies(pool, NOW, retention, 3)).toBe(0);
  });

  it('keeps a body sent again by a request the log does not show yet, for the grace', async () => {
    const { pool } = await setup();
    const body = { prompt: 'asked long ago, and again just now' };
    const hash = await storeBody(pool, body);
    await logRequest(pool, daysAgo(10), hash);
    // A new request with the same body: its body is sent, but its record is not in the log yet.
    const bodies = new RequestBodies(pool, () => true);
    expect(bodies.save(body, true)).toBe(hash);
    await bodies.drain();
    const now = new Date();
    expect(await deleteExpiredBodies(pool, now, retention)).toBe(0);
    expect(await inTable(pool, hash)).toBe(true);
    // Past the grace, with still no request of its own in the log, it goes.
    expect(await deleteExpiredBodies(pool, new Date(now.getTime() + 2 * 3_600_000), retention)).toBe(1);
  });

  it('deletes at most its limit in a run and the rest in the next', async () => {
    const { pool } = await setup();
    const hashes: string[] = [];
    for (let i = 0; i < 5; i++) {
      hashes.push(await storeBody(pool, { n: i }));
      await logRequest(pool, daysAgo(3), hashes[i] as string);
    }
    expect(await deleteExpiredBodies(pool, NOW, retention, 3)).toBe(3);
    expect(await deleteExpiredBodies(pool, NOW, retention, 3)).toBe(2);
    for (const h of hashes) expect(await inTable(pool, h)).toBe(false);
  });
});

describe('bodies of earlier versions, kept in the blob store', () => {
  it('are moved into the table once, and afterwards nothing looks in the blob store', async () => {
    const { pool, store, files, blobs, database } = await setup();
    const body = { messages: [{ role: 'user', content: 'from an earlier version' }] };
    const legacy = await writeLegacy(files, body);
    await logRequest(pool, NOW, legacy);
    // A blob that does not match its hash: never served, so it is not moved, and it goes.
    const forged = sha('what the log holds');
    await files.write(legacyBodyKey(forged), gzipSync('{"something":"else"}'));
    await logRequest(pool, NOW, forged);
    // A hash the log holds whose body is nowhere (deleted long ago, or never stored).
    await logRequest(pool, NOW, sha('gone'));

    // The blob store fails mid-way: nothing is marked done, and the next run resumes.
    blobs.failReads = 1;
    await expect(moveLegacyBodies({ pool, blobs, store, batch: 1 })).rejects.toThrow(/did not answer/);
    expect(await moveLegacyBodies({ pool, blobs, store, batch: 1 })).toEqual({
      done: true,
      moved: 1,
      unmatched: 1,
    });

    expect(await inTable(pool, legacy)).toBe(true);
    expect(await files.size(legacyBodyKey(legacy))).toBeUndefined();
    expect(await files.size(legacyBodyKey(forged))).toBeUndefined();
    expect(await inTable(pool, forged)).toBe(false);
    const source = { sql: pool, blobs };
    expect(await loggedBody(source, legacy)).toEqual(body);
    expect(await loggedBody(source, forged)).toBeUndefined();

    // A restart: a pool of its own, which has not seen the mark yet, over the same database.
    const restarted = new pg.Pool(database.clientConfig);
    extraPools.push(restarted);
    blobs.calls = 0;
    expect(await moveLegacyBodies({ pool: restarted, blobs, store })).toEqual({
      done: true,
      moved: 0,
      unmatched: 0,
    });
    const again = { sql: restarted, blobs };
    expect(await loggedBody(again, legacy)).toEqual(body);
    expect(await readBodyJson(again, sha('gone'))).toBeUndefined();
    expect(await removeBodies(again, [sha('gone'), legacy])).toBe(1);
    expect(await deleteExpiredBodies(restarted, daysAgo(-400), retention)).toBe(0);
    expect(blobs.calls).toBe(0);
  });

  it('are left alone while another instance moves them', async () => {
    const { pool, store, files, blobs, database } = await setup();
    const legacy = await writeLegacy(files, { other: 'instance' });
    await logRequest(pool, NOW, legacy);
    const other = new pg.Client(database.clientConfig);
    await other.connect();
    try {
      await other.query(`SELECT pg_advisory_lock(hashtext(current_schema() || '.request_bodies_legacy'))`);
      expect(await moveLegacyBodies({ pool, blobs, store })).toEqual({ done: false, moved: 0, unmatched: 0 });
      expect(blobs.calls).toBe(0);
    } finally {
      await other.end();
    }
    expect((await moveLegacyBodies({ pool, blobs, store })).moved).toBe(1);
  });

  it('are deleted by the retention worker when their requests are past retention', async () => {
    const { pool, store, files, blobs } = await setup();
    const expired = await writeLegacy(files, { prompt: 'old and expired' });
    await logRequest(pool, daysAgo(5), expired);
    const kept = await writeLegacy(files, { prompt: 'old but within retention' });
    await logRequest(pool, daysAgo(5), null, kept);
    await logRequest(pool, NOW, kept);
    const lines: string[] = [];
    const worker = startRetentionWorker({
      sql: pool,
      blobs,
      store,
      retentionDays: 1,
      overrides: () => ({}),
      clock: () => NOW,
      log: (line) => lines.push(line),
      intervalMs: 20,
    });
    try {
      // The move's log line comes once the move is done, which may be after the expired body is gone.
      await eventually(
        async () =>
          (await files.size(legacyBodyKey(expired))) === undefined &&
          !(await inTable(pool, expired)) &&
          lines.some((line) => /moved 2 bodies/.test(line)),
        (gone) => gone,
        5000,
      );
    } finally {
      worker.stop();
    }
    expect(await loggedBody({ sql: pool, blobs }, expired)).toBeUndefined();
    expect(await loggedBody({ sql: pool, blobs }, kept)).toEqual({ prompt: 'old but within retention' });
    expect(await files.size(legacyBodyKey(kept))).toBeUndefined();
    expect(lines.join('\n')).toMatch(/moved 2 bodies/);
  });
});
