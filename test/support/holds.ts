import type pg from 'pg';
import { eventually } from './gateway.ts';

/**
 * How the holds of a request (by the gateway's id) ended, from the holds read model. A hold carved from a spend
 * lease in memory ends with its failed request and stores nothing (docs/billing.md, spend leases): once the
 * request's record is in the log, failed and charged nothing, with no hold stored, its hold reads as `failed`.
 */
export async function holdsOf(pool: pg.Pool, requestId: unknown): Promise<string[]> {
  return eventually(
    async () => {
      const { rows } = await pool.query<{ status: string }>(
        'SELECT status FROM holds WHERE request_id = $1 ORDER BY created_at',
        [requestId],
      );
      if (rows.length > 0) return rows.map((row) => row.status);
      const logged = await pool.query<{ status: number; cost_nanos: string }>(
        'SELECT status, cost_nanos FROM request_log WHERE request_id = $1',
        [requestId],
      );
      const failed =
        logged.rows.length > 0 && logged.rows.every((r) => r.status >= 400 && r.cost_nanos === '0');
      return failed ? ['failed'] : [];
    },
    (found) => found.length > 0 && found.every((status) => status !== 'open'),
    3000,
  );
}

/**
 * How the stored holds of a request ended (a job's, held durably when it was queued), once none is open: read from
 * the holds read model, which follows the log.
 */
export async function endedHolds(pool: pg.Pool, requestId: string, timeoutMs = 15_000): Promise<string[]> {
  const rows = await eventually(
    async () =>
      (await pool.query<{ status: string }>('SELECT status FROM holds WHERE request_id = $1', [requestId]))
        .rows,
    (found) => found.length > 0 && found.every((row) => row.status !== 'open'),
    timeoutMs,
  );
  return rows.map((row) => row.status);
}
