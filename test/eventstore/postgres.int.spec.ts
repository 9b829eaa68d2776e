import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../events/envelope.ts';
import { START } from '../../events/store.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import type { PostgresEventStore } from '../../src/eventstore/postgres/store.ts';
import { writeBatch } from '../../src/eventstore/postgres/write-batch.ts';
import { testDatabase, testStore } from '../support/database.ts';
import { eventStoreContract, newEvent, readAllFrom } from './contract.ts';

function storeOn(database: Database) {
  return testStore(database, { pollIntervalMs: 200 });
}

eventStoreContract('postgres (external server)', async () => {
  const database = await testDatabase();
  const store = await storeOn(database);
  return {
    store,
    async close() {
      await store.close();
      await database.close();
    },
  };
});

eventStoreContract('postgres (embedded, managed by the gateway)', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-embedded-'));
  const database = await openDatabase(
    { databaseUrl: undefined, dataDir, dbSchema: 'gateway' },
    { whenRunning: 'restart', durable: false },
  );
  const store = await storeOn(database);
  return {
    store,
    async close() {
      await store.close();
      await database.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
});

describe('postgres event store', () => {
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

  it('never lets a subscriber pass an event whose transaction commits late', async () => {
    const stream = 'late-commits';
    const controller = new AbortController();
    const seen: StoredEvent[] = [];
    const checkpoints: string[] = [];
    const consuming = (async () => {
      for await (const event of store.subscribe(START, controller.signal)) {
        seen.push(event);
        checkpoints.push(event.checkpoint);
      }
    })();

    // A writer that takes its transaction id first and commits last.
    const slow = await database.pool.connect();
    await slow.query('BEGIN');
    const lateEvent = newEvent('Late');
    await writeBatch(slow, [{ stream: `${stream}-slow`, events: [lateEvent], expected: 'any' }], new Date());

    const writers = Array.from({ length: 40 }, (_, i) =>
      store.append(`${stream}-${i % 5}`, [newEvent('Early')], 'any'),
    );
    await Promise.all(writers);
    await new Promise((r) => setTimeout(r, 300));
    // Everything committed after the slow writer took its id is held back, not skipped.
    expect(seen).toHaveLength(0);

    await slow.query('COMMIT');
    slow.release();
    const deadline = Date.now() + 5000;
    while (seen.length < 41 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    await consuming;

    expect(seen.map((e) => e.id)).toContain(lateEvent.id);
    expect(seen[0]?.id).toBe(lateEvent.id);
    expect(new Set(seen.map((e) => e.id)).size).toBe(41);
    for (let i = 1; i < checkpoints.length; i++) {
      expect(store.compareCheckpoints(checkpoints[i - 1] as string, checkpoints[i] as string)).toBe(-1);
    }
    expect(await readAllFrom(store, START)).toHaveLength(41);
  });

  it('delivers every event exactly once under many concurrent writers', async () => {
    const before = await readAllFrom(store, START);
    const from = before[before.length - 1]?.checkpoint ?? START;
    const controller = new AbortController();
    const seen: string[] = [];
    const consuming = (async () => {
      for await (const event of store.subscribe(from, controller.signal)) {
        seen.push(event.id);
        if (seen.length === 500) controller.abort();
      }
    })();
    const ids = await Promise.all(
      Array.from({ length: 500 }, async (_, i) => {
        const event = newEvent('Burst');
        await store.append(`burst-${i % 17}`, [event], 'any');
        return event.id;
      }),
    );
    await consuming;
    expect(seen.sort()).toEqual(ids.sort());
  });

  it('writes appends that arrive together in one transaction', async () => {
    const ids = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const event = newEvent('Grouped');
        await store.append(`group-${i}`, [event], 'no_stream');
        return event.id;
      }),
    );
    const { rows } = await database.pool.query<{ transactions: string }>(
      'SELECT count(DISTINCT transaction_id) AS transactions FROM events WHERE id = ANY($1::uuid[])',
      [ids],
    );
    expect(Number(rows[0]?.transactions)).toBeLessThan(10);
  });

  it('keeps one bad append in a group from failing the others', async () => {
    const shared = newEvent();
    await store.append('dup-a', [shared], 'no_stream');
    const results = await Promise.allSettled([
      store.append('dup-b', [shared], 'no_stream'),
      store.append('dup-c', [newEvent()], 'no_stream'),
    ]);
    expect(results[0]?.status).toBe('rejected');
    expect(results[1]?.status).toBe('fulfilled');
  });

  it('detects an edited or deleted event row through the hash chain', async () => {
    await store.append('audit-x', [newEvent(), newEvent(), newEvent()], 'no_stream');
    const { verifyChain } = await import('../../events/envelope.ts');
    expect(verifyChain(await store.readStream('audit-x'))).toEqual([]);
    await database.pool.query(
      `UPDATE events SET data = jsonb_set(data, '{value}', '"forged"') WHERE stream = 'audit-x' AND revision = 1`,
    );
    expect(verifyChain(await store.readStream('audit-x')).map((b) => b.revision)).toContain(1);
    await database.pool.query(`DELETE FROM events WHERE stream = 'audit-x' AND revision = 1`);
    expect(verifyChain(await store.readStream('audit-x')).length).toBeGreaterThan(0);
  });
});
