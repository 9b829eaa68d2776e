import type pg from 'pg';
import type { Projection } from '../../projections/types.ts';

export const CHECKPOINTS_DDL = `CREATE TABLE IF NOT EXISTS projection_checkpoints (
  name text PRIMARY KEY,
  checkpoint text NOT NULL,
  position bigint NOT NULL,
  updated_at timestamptz NOT NULL
)`;

/** Creates the projection's tables under the given physical names, each once. */
export async function createTables(
  sql: pg.Pool | pg.PoolClient,
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

export async function ensureProjectionTables(
  pool: pg.Pool,
  projections: readonly Projection[],
): Promise<void> {
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
        `INSERT INTO projection_checkpoints (name, checkpoint, position, updated_at) VALUES ($1, '', 0, now())
         ON CONFLICT (name) DO NOTHING`,
        [projection.name],
      );
    }
  } finally {
    await client.query(`SELECT pg_advisory_unlock(hashtext(current_schema() || '.projection_ddl'))`);
    client.release();
  }
}
