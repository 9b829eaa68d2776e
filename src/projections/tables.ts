import type pg from 'pg';
import type { Projection } from '../../projections/types.ts';

export const CHECKPOINTS_DDL = `CREATE TABLE IF NOT EXISTS projection_checkpoints (
  name text PRIMARY KEY,
  checkpoint text NOT NULL,
  position bigint NOT NULL,
  updated_at timestamptz NOT NULL
);
ALTER TABLE projection_checkpoints ADD COLUMN IF NOT EXISTS version integer NOT NULL DEFAULT 0`;

/** Creates the projection's tables under the given physical names, each once. */
export async function createTables(
  sql: pg.Pool | pg.ClientBase,
  projection: Projection,
  physical: Record<string, string>,
): Promise<void> {
  for (const [logical, ddl] of Object.entries(projection.tables)) {
    const table = physical[logical] as string;
    const { rows } = await sql.query<{ exists: boolean }>('SELECT to_regclass($1) IS NOT NULL AS exists', [
      table,
    ]);
    if (!rows[0]?.exists) await sql.query(ddl(table));
  }
}

/**
 * Creates missing tables and checkpoint rows; returns the projections whose stored version differs from the
 * code's (their tables must be rebuilt before use).
 */
export async function ensureProjectionTables(
  pool: pg.Pool,
  projections: readonly Projection[],
): Promise<Projection[]> {
  const stale: Projection[] = [];
  const client = await pool.connect();
  try {
    await client.query(`SELECT pg_advisory_lock(hashtext(current_schema() || '.projection_ddl'))`);
    await client.query(CHECKPOINTS_DDL);
    for (const projection of projections) {
      await createTables(
        client,
        projection,
        Object.fromEntries(Object.keys(projection.tables).map((t) => [t, t])),
      );
      await client.query(
        `INSERT INTO projection_checkpoints (name, checkpoint, position, updated_at, version)
         VALUES ($1, '', 0, now(), $2) ON CONFLICT (name) DO NOTHING`,
        [projection.name, projection.version],
      );
      const { rows } = await client.query<{ version: number }>(
        'SELECT version FROM projection_checkpoints WHERE name = $1',
        [projection.name],
      );
      if (rows[0]?.version !== projection.version) stale.push(projection);
    }
    return stale;
  } finally {
    await client.query(`SELECT pg_advisory_unlock(hashtext(current_schema() || '.projection_ddl'))`);
    client.release();
  }
}
