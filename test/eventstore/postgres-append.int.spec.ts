import { createHash, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chainHash, GENESIS_HASH, type NewEvent, verifyChain } from '../../events/envelope.ts';
import { DuplicateEventIdError, WrongExpectedRevisionError } from '../../events/store.ts';
import type { Database } from '../../src/db/database.ts';
import { EVENT_STORE_DDL } from '../../src/eventstore/postgres/schema.ts';
import type { PostgresEventStore } from '../../src/eventstore/postgres/store.ts';
import { type AppendOutcome, hashedAround, writeBatch } from '../../src/eventstore/postgres/write-batch.ts';
import { testDatabase, testStore } from '../support/database.ts';
import { newEvent } from './contract.ts';

function storeOn(database: Database) {
  return testStore(database, { pollIntervalMs: 200 });
}

function stream(): string {
  return `append-${randomUUID()}`;
}

function ok(outcome: AppendOutcome | undefined) {
  if (!outcome?.ok) throw outcome?.error ?? new Error('no outcome');
  return outcome.result;
}

/** Data whose canonical JSON exercises escaping, key order, numbers and the revision marker. */
const awkward = {
  é: 'accents é, CJK 中文, emoji 😀, a quote " and a backslash \\',
  Z: ['newline\n', 'tab\t', 'control \u0001', 'del \u007f', 'nbsp \u00a0', 'line sep \u2028'],
  _: { revision: 0, stream: 'x', nested: { b: 1, a: [1e21, 1e-7, -0, 0.1, 2 ** 53 - 1, null, true] } },
  text: ',"revision":0,"stream":"fake"}',
  '': 'empty key',
  '😀': 'astral key',
  '\uffff': 'key after the astral one in UTF-16 order',
};

describe('postgres append in one statement', () => {
  let database: Database;
  let store: PostgresEventStore;
  beforeAll(async () => {
    database = await testDatabase();
    store = await storeOn(database);
  });
  afterAll(async () => {
    await store.close();
    await database.close();
  });

  it('cuts the canonical JSON around the revision exactly as chainHash hashes it', () => {
    const event = { ...newEvent('Awkward', awkward), stream: 'a"b', occurredAt: new Date() };
    const [head, tail] = hashedAround(event);
    expect(head.endsWith(',"revision":')).toBe(true);
    for (const revision of [0, 7, 123456789]) {
      const hashed = `${GENESIS_HASH}\n${head}${revision}${tail}`;
      expect(createHash('sha256').update(hashed).digest('hex')).toBe(
        chainHash(GENESIS_HASH, { ...event, revision }),
      );
    }
  });

  it('hashes in the database the same bytes as chainHash, whatever the data holds', async () => {
    const name = `${stream()}-"quoted" ünïcode 😀`;
    await store.append(name, [newEvent('Ünïcode ✓', awkward), newEvent('Plain')], 'no_stream');
    await store.append(
      name,
      [{ ...newEvent('Dated', awkward), occurredAt: new Date('2026-02-03T04:05:06.789Z') }],
      1,
    );
    const read = await store.readStream(name);
    expect(read).toHaveLength(3);
    expect(verifyChain(read)).toEqual([]);
    expect(read[0]?.data).toMatchObject(JSON.parse(JSON.stringify(awkward)));
    const { rows } = await database.pool.query('SELECT revision::int, hash FROM streams WHERE stream = $1', [
      name,
    ]);
    expect(rows).toEqual([{ revision: 2, hash: read[2]?.hash }]);
  });

  it('decides every append of a batch on its own, in order, in one statement', async () => {
    const [a, b, c] = [stream(), stream(), stream()];
    const [e1, e2, e3] = [newEvent(), newEvent(), newEvent()] as [NewEvent, NewEvent, NewEvent];
    const outcomes = await writeBatch(
      database.pool,
      [
        { stream: a, events: [e1, e2], expected: 'no_stream' },
        { stream: a, events: [e3], expected: 1 },
        { stream: a, events: [newEvent()], expected: 0 },
        { stream: b, events: [e1], expected: 'any' },
        { stream: a, events: [e1, e2], expected: 'no_stream' },
        { stream: c, events: [], expected: 'any' },
        { stream: c, events: [], expected: 'stream_exists' },
        { stream: b, events: [newEvent()], expected: 'no_stream' },
      ],
      new Date(),
    );
    expect(ok(outcomes[0]).nextRevision).toBe(1);
    expect(ok(outcomes[1]).nextRevision).toBe(2);
    const wrong = outcomes[2]?.ok === false ? outcomes[2].error : undefined;
    expect(wrong).toBeInstanceOf(WrongExpectedRevisionError);
    expect((wrong as WrongExpectedRevisionError).actual).toBe(2);
    expect((wrong as WrongExpectedRevisionError).expected).toBe(0);
    const duplicate = outcomes[3]?.ok === false ? outcomes[3].error : undefined;
    expect(duplicate).toBeInstanceOf(DuplicateEventIdError);
    expect((duplicate as DuplicateEventIdError).eventId).toBe(e1.id);
    // The same batch again, in the same statement: the earlier success, marked as found rather than written.
    expect(ok(outcomes[4])).toEqual({ ...ok(outcomes[0]), existing: true });
    expect(ok(outcomes[0])?.existing).toBeUndefined();
    expect(ok(outcomes[5])).toEqual({ nextRevision: -1, checkpoint: '', position: 0n });
    expect(outcomes[6]?.ok === false && outcomes[6].error).toBeInstanceOf(WrongExpectedRevisionError);
    expect(ok(outcomes[7]).nextRevision).toBe(0);

    const read = await store.readStream(a);
    expect(read.map((e) => e.id)).toEqual([e1.id, e2.id, e3.id]);
    expect(verifyChain(read)).toEqual([]);
    expect(read[1]?.checkpoint).toBe(ok(outcomes[0]).checkpoint);
    expect(read[2]?.checkpoint).toBe(ok(outcomes[1]).checkpoint);
    const { rows } = await database.pool.query<{ stream: string; revision: string }>(
      'SELECT stream, revision FROM streams WHERE stream = ANY($1) ORDER BY revision',
      [[a, b, c]],
    );
    expect(rows.map((r) => [r.stream, Number(r.revision)])).toEqual([
      [b, 0],
      [a, 2],
    ]);
  });

  it('sends one statement per append', async () => {
    const name = stream();
    await store.append(name, [newEvent()], 'no_stream');
    let sent = 0;
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      sent += 1;
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    try {
      await store.append(name, [newEvent()], 0);
      await store.append(name, [newEvent(), newEvent()], 'any');
    } finally {
      pg.Client.prototype.query = query;
    }
    expect(sent).toBe(2);
  });

  it('waits for a writer of the previous version holding the same stream lock', async () => {
    const name = stream();
    const other = await database.pool.connect();
    try {
      await other.query('BEGIN');
      await other.query(`SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || '/' || $1, 0))`, [
        name,
      ]);
      let done = false;
      const appending = store.append(name, [newEvent()], 'no_stream').then((r) => {
        done = true;
        return r;
      });
      await new Promise((r) => setTimeout(r, 300));
      expect(done).toBe(false);
      await other.query('COMMIT');
      expect((await appending).nextRevision).toBe(0);
    } finally {
      other.release();
    }
  });
});

describe('postgres append on a database of the previous version', () => {
  let database: Database;
  beforeAll(async () => {
    database = await testDatabase();
  });
  afterAll(async () => {
    await database.close();
  });

  it('creates its function at start and continues the streams and chains it finds', async () => {
    // What the previous version left: the same tables, no function, heads in `streams` (one of them at -1,
    // from an append refused on a new stream).
    await database.pool.query(EVENT_STORE_DDL);
    const old = stream();
    let prev = GENESIS_HASH;
    for (const [revision, event] of [newEvent('Old'), newEvent('Old', awkward)].entries()) {
      const occurredAt = new Date();
      const hash = chainHash(prev, { ...event, stream: old, revision, occurredAt });
      await database.pool.query(
        `INSERT INTO events (id, stream, revision, type, data, metadata, occurred_at, prev_hash, hash)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [
          event.id,
          old,
          revision,
          event.type,
          JSON.stringify(event.data),
          JSON.stringify(event.metadata),
          occurredAt,
          prev,
          hash,
        ],
      );
      prev = hash;
    }
    const empty = stream();
    await database.pool.query(
      'INSERT INTO streams (stream, revision, hash) VALUES ($1, 1, $2), ($3, -1, $4)',
      [old, prev, empty, GENESIS_HASH],
    );

    // Two instances starting at once both replace the function.
    const [first, second] = await Promise.all([storeOn(database), storeOn(database)]);
    try {
      expect((await first.append(old, [newEvent('New')], 1)).nextRevision).toBe(2);
      expect((await second.append(old, [newEvent('New', awkward)], 2)).nextRevision).toBe(3);
      expect((await first.append(empty, [newEvent()], 'no_stream')).nextRevision).toBe(0);
      const read = await first.readStream(old);
      expect(read.map((e) => e.type)).toEqual(['Old', 'Old', 'New', 'New']);
      expect(verifyChain(read)).toEqual([]);
      expect(verifyChain(await first.readStream(empty))).toEqual([]);
    } finally {
      await first.close();
      await second.close();
    }
  });
});
