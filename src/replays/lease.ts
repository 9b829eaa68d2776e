import type pg from 'pg';

/**
 * Runs `work` while this instance holds a PostgreSQL advisory lock on `name`; returns false without running it
 * when another instance holds it. Several gateways follow the same log, and this keeps them from paying twice
 * for one shadow comparison: the one that holds the lock runs it, the others pass (and afterwards find it
 * recorded). The lock goes with the session, so a gateway that dies lets go.
 */
export async function withLease(
  pool: pg.Pool,
  name: string,
  report: (message: string, error?: unknown) => void,
  work: () => Promise<void>,
): Promise<boolean> {
  const client = await pool.connect();
  const lost = (error: Error) => report(`lease ${name} lost`, error);
  client.on('error', lost);
  try {
    const { rows } = await client.query<{ held: boolean }>(
      `SELECT pg_try_advisory_lock(hashtext(current_schema() || '.' || $1)) AS held`,
      [name],
    );
    if (!rows[0]?.held) return false;
    try {
      await work();
    } finally {
      await client
        .query(`SELECT pg_advisory_unlock(hashtext(current_schema() || '.' || $1))`, [name])
        .catch((error) => report(`lease ${name}: unlocking failed`, error));
    }
    return true;
  } finally {
    client.removeListener('error', lost);
    client.release();
  }
}
