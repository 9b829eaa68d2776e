import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  bodyJson,
  legacyBodyKey,
  RequestBodies,
  readBodyJson,
  removeBodies,
  removeStoredBodies,
} from '../../src/billing/request-bodies.ts';
import type { Database } from '../../src/db/database.ts';
import { FsBlobStore } from '../../src/files/blob-store.ts';
import { loggedBody } from '../../src/requests/lookup.ts';
import { testDatabase } from '../support/database.ts';

describe('the request log’s body store', () => {
  let database: Database;
  let dir: string;
  let blobs: FsBlobStore;
  let bodies: RequestBodies;
  const source = () => ({ sql: database.pool, blobs });

  beforeAll(async () => {
    database = await testDatabase();
    dir = await mkdtemp(join(tmpdir(), 'gw-bodies-'));
    blobs = new FsBlobStore(dir);
    bodies = new RequestBodies(database.pool, () => true);
    await bodies.init();
  });
  afterAll(async () => {
    await database.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('stores a burst of bodies, each once, and reads each back checked against its hash', async () => {
    const sent = Array.from({ length: 500 }, (_, i) => ({
      id: `chatcmpl-${i}`,
      content: `answer ${i % 250}`,
    }));
    const hashes = sent.map((body) => bodies.save(body, true));
    // A body seen again is not queued again.
    expect(bodies.save(sent[0], true)).toBe(hashes[0]);
    await bodies.drain();
    const { rows } = await database.pool.query('SELECT count(*)::int AS n FROM request_bodies');
    expect(rows[0]?.n).toBe(500);
    for (const i of [0, 137, 499]) expect(await loggedBody(source(), hashes[i] as string)).toEqual(sent[i]);
  });

  it('tries a failed INSERT again, so a database away for a moment loses no body', async () => {
    let refusals = 2;
    const errors: unknown[] = [];
    const flaky = {
      query: (text: string, values?: unknown[]) => {
        if (text.includes('INSERT INTO request_bodies') && refusals-- > 0)
          return Promise.reject(new Error('connection terminated'));
        return database.pool.query(text, values);
      },
    } as unknown as typeof database.pool;
    const writer = new RequestBodies(
      flaky,
      () => true,
      (error) => errors.push(error),
    );
    const sent = Array.from({ length: 20 }, (_, i) => ({ id: `retry-${i}` }));
    const hashes = sent.map((body) => writer.save(body, true) as string);
    await writer.drain();
    expect(refusals).toBeLessThan(0);
    expect(errors).toEqual([]);
    for (const [i, sha] of hashes.entries()) expect(await loggedBody(source(), sha)).toEqual(sent[i]);
  });

  it('stores a body deleted elsewhere again, at once after a deletion here and within a minute after one there', async () => {
    const inTable = async (sha256: string) =>
      (await database.pool.query('SELECT 1 FROM request_bodies WHERE sha256 = $1', [sha256])).rows.length > 0;
    const here = new RequestBodies(database.pool, () => true);
    const body = { prompt: 'deleted and asked again' };
    const hash = here.save(body, true) as string;
    await here.drain();
    // Deleted here (DELETE /v1/responses on this instance): the next request stores it again.
    await removeBodies({ ...source(), forget: (hashes) => here.forget(hashes) }, [hash]);
    here.save(body, true);
    await here.drain();
    expect(await inTable(hash)).toBe(true);
    // Deleted by another instance, which this one is not told of: stored again once a minute has passed.
    await removeStoredBodies(database.pool, [hash]);
    here.save(body, true);
    await here.drain();
    expect(await inTable(hash)).toBe(false);
    const now = Date.now();
    const clock = vi.spyOn(Date, 'now').mockReturnValue(now + 61_000);
    try {
      here.save(body, true);
      await here.drain();
    } finally {
      clock.mockRestore();
    }
    expect(await inTable(hash)).toBe(true);
  });

  it('writes a body queued twice in one batch once (a deletion forgotten between the two)', async () => {
    const body = { prompt: 'queued twice' };
    const errors: unknown[] = [];
    const twice = new RequestBodies(
      database.pool,
      () => true,
      (error) => errors.push(error),
    );
    // The first body's INSERT is in flight while the other is queued, forgotten and queued again.
    twice.save({ prompt: 'in flight' }, true);
    const hash = twice.save(body, true) as string;
    twice.forget([hash]);
    twice.save(body, true);
    await twice.drain();
    expect(errors).toEqual([]);
    expect(await loggedBody(source(), hash)).toEqual(body);
  });

  it('hashes but does not store a body the account does not keep', async () => {
    const sha = bodies.save({ secret: true }, false) as string;
    await bodies.drain();
    expect(sha).toBe(bodyJson({ secret: true }).sha256);
    expect(await readBodyJson(source(), sha)).toBeUndefined();
  });

  it('stores a body of several megabytes, and bodies with quotes, backslashes and escapes as they are', async () => {
    const big = { text: 'x'.repeat(6 * 1024 * 1024), odd: `'"\\\u0000\ud800 ${'$1'}` };
    const sha = bodies.save(big, true) as string;
    await bodies.drain();
    expect(await loggedBody(source(), sha)).toEqual(big);
  });

  it('still reads and deletes a body stored as a gzipped blob by earlier versions', async () => {
    const { json, sha256 } = bodyJson({ legacy: 'body' });
    await blobs.write(legacyBodyKey(sha256), gzipSync(json));
    expect(await loggedBody(source(), sha256)).toEqual({ legacy: 'body' });
    const kept = bodies.save({ kept: 1 }, true) as string;
    await bodies.drain();
    expect(await removeBodies(source(), [sha256, kept, 'f'.repeat(64)])).toBe(2);
    expect(await loggedBody(source(), sha256)).toBeUndefined();
    expect(await loggedBody(source(), kept)).toBeUndefined();
  });

  it('serves nothing for a stored body that does not match its hash', async () => {
    const sha = bodies.save({ honest: true }, true) as string;
    await bodies.drain();
    await database.pool.query(`UPDATE request_bodies SET body = '{"honest":false}' WHERE sha256 = $1`, [sha]);
    expect(await loggedBody(source(), sha)).toBeUndefined();
  });
});
