import type pg from 'pg';

/**
 * Runs `work` while this instance holds the batch's PostgreSQL advisory lock; returns without running it when
 * another instance holds it. The lock goes with the session, so an instance that dies lets go of its batches.
 */
export async function withBatchLease(
  pool: pg.Pool,
  batchId: string,
  log: (line: string) => void,
  work: () => Promise<void>,
): Promise<void> {
  const client = await pool.connect();
  // The database going away (a restart) must not end the process: the lock goes with the session, the unlock
  // below fails and is logged, and the next pass takes the batch again from its recorded lines.
  const lost = (error: Error) => log(`batch ${batchId} lost its lease: ${String(error)}`);
  client.on('error', lost);
  try {
    const { rows } = await client.query<{ held: boolean }>(
      `SELECT pg_try_advisory_lock(hashtext(current_schema() || '.batch.' || $1)) AS held`,
      [batchId],
    );
    if (!rows[0]?.held) return; // another instance works it
    try {
      await work();
    } finally {
      await client.query(`SELECT pg_advisory_unlock(hashtext(current_schema() || '.batch.' || $1))`, [
        batchId,
      ]);
    }
  } finally {
    client.removeListener('error', lost);
    client.release();
  }
}
