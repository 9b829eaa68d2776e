import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { StoredEvent } from '../../events/envelope.ts';
import { START } from '../../events/store.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { PostgresEventStore } from '../../src/eventstore/postgres/store.ts';
import { describeError } from '../../src/http/errors.ts';
import { dropSchema } from '../support/database.ts';
import { eventually } from '../support/gateway.ts';
import { newEvent } from './contract.ts';

/**
 * An external PostgreSQL that drops every connection of the gateway (a failover, an administrator's
 * pg_terminate_backend): the process stays up, requests in the meantime fail as 503s, and the pools and the
 * LISTEN connection come back by themselves.
 */
describe('an external PostgreSQL that drops the gateway connections', () => {
  const tag = randomBytes(6).toString('hex');
  const applicationName = `gw_reconnect_${tag}`;
  const schema = `t_${tag}`;
  let database: Database;
  let store: PostgresEventStore;

  beforeAll(async () => {
    const url = new URL(inject('databaseUrl'));
    url.searchParams.set('application_name', applicationName);
    database = await openDatabase(
      { databaseUrl: url.toString(), dataDir: '', dbSchema: schema },
      { whenRunning: 'attach' },
    );
    // Only a notification can deliver an append within this test's bounds: the poll is far slower.
    store = await PostgresEventStore.open({
      pool: database.pool,
      listenConfig: database.clientConfig,
      schema,
      pollIntervalMs: 30_000,
    });
  });
  afterAll(async () => {
    await store?.close();
    await database?.close();
    await dropSchema(schema);
  });

  const dropConnections = async (): Promise<number> => {
    const admin = new pg.Client({ connectionString: inject('databaseUrl') });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ dropped: string }>(
        'SELECT count(pg_terminate_backend(pid)) AS dropped FROM pg_stat_activity WHERE application_name = $1',
        [applicationName],
      );
      return Number(rows[0]?.dropped);
    } finally {
      await admin.end();
    }
  };

  it('survives a checked-out connection being cut, answers 503 for it, and the pool serves again', async () => {
    const held = await database.pool.connect();
    await held.query('SELECT 1');
    expect(await dropConnections()).toBeGreaterThan(0);

    const failure = await held.query('SELECT 1').catch((error: unknown) => error);
    held.release();
    const described = describeError(failure);
    expect(described.status).toBe(503);
    expect(described.headers['retry-after']).toBe('2');
    expect(described.body.error.type).toBe('api_error');

    const one = await eventually(
      () =>
        database.pool.query<{ one: number }>('SELECT 1 AS one').then(
          (r) => r.rows[0]?.one,
          () => undefined,
        ),
      (value) => value === 1,
      5000,
    );
    expect(one).toBe(1);
  });

  it('opens its LISTEN connection again, so subscribers hear appends at once', async () => {
    const controller = new AbortController();
    const seen: StoredEvent[] = [];
    const consuming = (async () => {
      for await (const event of store.subscribe(START, controller.signal)) seen.push(event);
    })();
    try {
      await store.append('reconnect-1', [newEvent('Before')], 'no_stream');
      expect(
        (await eventually(
          async () => seen.length,
          (n) => n === 1,
          3000,
        )) as number,
      ).toBe(1);
      // Past the tail's short burst of quick reads after a notification, so that only a new one can wake it.
      await new Promise((r) => setTimeout(r, 1500));

      expect(await dropConnections()).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 1500));
      await store.append('reconnect-1', [newEvent('After')], 0);
      expect(
        await eventually(
          async () => seen.length,
          (n) => n === 2,
          3000,
        ),
      ).toBe(2);
    } finally {
      controller.abort();
      await consuming.catch(() => undefined);
    }
  });
});
