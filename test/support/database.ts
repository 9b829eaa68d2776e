import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { PostgresEventStore } from '../../src/eventstore/postgres/store.ts';

/** A database of its own for one test file: a fresh schema in the run's PostgreSQL, dropped by `close`. */
export async function testDatabase(): Promise<Database> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const database = await openDatabase(
    { databaseUrl: inject('databaseUrl'), dataDir: '', dbSchema: schema },
    { whenRunning: 'attach' },
  );
  return {
    ...database,
    async close() {
      await database.close();
      await dropSchema(schema);
    },
  };
}

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: inject('databaseUrl') });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
}

/** The PostgreSQL event store on a test database's schema (`pollIntervalMs` as the test needs it). */
export function testStore(
  database: Database,
  options: { pollIntervalMs?: number } = {},
): Promise<PostgresEventStore> {
  return PostgresEventStore.open({
    pool: database.pool,
    listenConfig: database.clientConfig,
    schema: database.schema,
    ...options,
  });
}
