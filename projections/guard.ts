import type { Sql } from './types.ts';

/**
 * Records that a projection folded an event; false when it already had. Counters use it so that folding an
 * event twice (a replay) changes nothing, beyond what the checkpoint transaction already guarantees.
 */
export async function firstTime(sql: Sql, table: string, eventId: string): Promise<boolean> {
  const inserted = await sql.query(`INSERT INTO ${table} (event_id) VALUES ($1) ON CONFLICT DO NOTHING`, [
    eventId,
  ]);
  return inserted.rowCount === 1;
}

export const guardTable = (t: string) => `CREATE TABLE IF NOT EXISTS ${t} (event_id uuid PRIMARY KEY)`;
