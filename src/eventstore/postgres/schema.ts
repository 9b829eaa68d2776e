import type pg from 'pg';

/**
 * The event log. `transaction_id` (xid8) plus `position` give the gap-free global order: readers only return
 * rows below the oldest transaction still running, so an event that commits late is never skipped.
 */
export const EVENT_STORE_DDL = `
CREATE TABLE IF NOT EXISTS events (
  position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
  id uuid NOT NULL,
  stream text NOT NULL,
  revision bigint NOT NULL,
  type text NOT NULL,
  data jsonb NOT NULL,
  metadata jsonb NOT NULL,
  occurred_at timestamptz NOT NULL,
  prev_hash text NOT NULL,
  hash text NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS events_id ON events (id);
CREATE UNIQUE INDEX IF NOT EXISTS events_stream_revision ON events (stream, revision);
CREATE INDEX IF NOT EXISTS events_global_order ON events (transaction_id, position);
CREATE TABLE IF NOT EXISTS streams (
  stream text PRIMARY KEY,
  revision bigint NOT NULL DEFAULT -1,
  hash text NOT NULL
);
`;

export async function migrateEventStore(client: pg.Pool | pg.PoolClient): Promise<void> {
  // Concurrent first starts (tests, two instances) would race on CREATE ... IF NOT EXISTS.
  await client.query(`SELECT pg_advisory_lock(hashtext(current_schema() || '.event_store_ddl'))`);
  try {
    await client.query(EVENT_STORE_DDL);
  } finally {
    await client.query(`SELECT pg_advisory_unlock(hashtext(current_schema() || '.event_store_ddl'))`);
  }
}
