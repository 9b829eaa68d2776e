import type pg from 'pg';
import type { EventStore } from '../../events/store.ts';
import { START } from '../../events/store.ts';
import type { Projection } from '../../projections/types.ts';
import { applyEvents } from './apply.ts';
import { BatchedSql } from './batched-sql.ts';
import { createTables } from './tables.ts';

const PAGE = 1000;

export interface RebuildResult {
  name: string;
  events: number;
  checkpoint: string;
}

/**
 * Replays the whole log into fresh tables, then swaps them in. The swap holds the checkpoint row's lock (which
 * the live runner takes first in each of its transactions), folds whatever arrived meanwhile, replaces the live
 * tables and sets the checkpoint, all in one transaction; readers see the old tables or the new, never a mix.
 */
export async function rebuildProjection(
  pool: pg.Pool,
  store: EventStore,
  projection: Projection,
): Promise<RebuildResult> {
  const shadow = Object.fromEntries(Object.keys(projection.tables).map((t) => [t, `${t}__rebuild`]));
  for (const table of Object.values(shadow)) await pool.query(`DROP TABLE IF EXISTS ${table}`);
  await createTables(pool, projection, shadow);

  let checkpoint = START;
  let position = 0n;
  let count = 0;
  const fold = async (client: pg.PoolClient, untilEmpty: boolean) => {
    for (;;) {
      const page = await store.readAll(checkpoint, { maxCount: PAGE });
      if (page.length === 0) return;
      const sql = new BatchedSql(client);
      await applyEvents(sql, projection, shadow, page);
      await sql.flush();
      const last = page[page.length - 1];
      if (last) ({ checkpoint, position } = last);
      count += page.length;
      if (!untilEmpty && page.length < PAGE) return;
    }
  };
  const first = await pool.connect();
  try {
    await fold(first, true);
  } finally {
    first.release();
  }

  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO projection_checkpoints (name, checkpoint, position, updated_at) VALUES ($1, '', 0, now())
       ON CONFLICT (name) DO NOTHING`,
      [projection.name],
    );
    await client.query('SELECT 1 FROM projection_checkpoints WHERE name = $1 FOR UPDATE', [projection.name]);
    await fold(client, true);
    for (const [live, fresh] of Object.entries(shadow)) {
      await client.query(`DROP TABLE IF EXISTS ${live}`);
      await client.query(`ALTER TABLE ${fresh} RENAME TO ${live}`);
    }
    await client.query(
      'UPDATE projection_checkpoints SET checkpoint = $2, position = $3, version = $4, updated_at = now() WHERE name = $1',
      [projection.name, checkpoint, position.toString(), projection.version],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
  return { name: projection.name, events: count, checkpoint };
}
