import type pg from 'pg';

/**
 * Runs `work` while this instance holds the PostgreSQL advisory lock on `name` (in the current schema); returns
 * false without running it when another instance holds it. Several gateways share one database, and this lets one
 * of them do a piece of background work (a batch, an eval, a shadow comparison) while the others pass. The lock
 * goes with the session, so a gateway that dies lets go; a connection that could not unlock may still hold it,
 * so it is closed rather than given back to the pool.
 */
export async function withAdvisoryLock(
  pool: pg.Pool,
  name: string,
  report: (message: string, error?: unknown) => void,
  work: () => Promise<void>,
): Promise<boolean> {
  const client = await pool.connect();
  // The database going away must not end the process: the work's next query fails instead.
  const lost = (error: Error) => report(`lock ${name} lost`, error);
  client.on('error', lost);
  let broken: Error | undefined;
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
        .catch((error: Error) => {
          broken = error;
          report(`lock ${name}: unlocking failed`, error);
        });
    }
    return true;
  } finally {
    client.removeListener('error', lost);
    client.release(broken);
  }
}
