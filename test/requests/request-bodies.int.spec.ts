import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bodyJson,
  legacyBodyKey,
  RequestBodies,
  readBodyJson,
  removeBodies,
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
