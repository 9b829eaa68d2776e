import type { Projection, Sql } from '../types.ts';

/** Every spend hold and how it ended; the expiry worker reads the open ones that are due. */
export const holdsProjection: Projection = {
  name: 'holds',
  version: 2,
  tables: {
    holds: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      hold_id text PRIMARY KEY,
      account_id text NOT NULL,
      month text NOT NULL,
      request_id text NOT NULL,
      amount_nanos numeric(38, 0) NOT NULL,
      sub_account_id text,
      tag text,
      expires_at timestamptz NOT NULL,
      status text NOT NULL,
      created_at timestamptz NOT NULL,
      ended_at timestamptz
    );
    CREATE INDEX ON ${t} (expires_at) WHERE status = 'open'`,
  },
  canHandle: ['SpendReserved', 'SpendSettled', 'SpendReleased'],
  async evolve(sql, t, event, stored) {
    switch (event.type) {
      case 'SpendReserved': {
        const d = event.data;
        // A hold its settlement carries (one stored event, events/logical.ts) is written once, already settled.
        const settled = stored.type === 'SpendSettled';
        await sql.query(
          `INSERT INTO ${t.holds} (hold_id, account_id, month, request_id, amount_nanos, sub_account_id, tag, expires_at,
             status, created_at, ended_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $10, $9, $11) ON CONFLICT (hold_id) DO NOTHING`,
          [
            d.holdId,
            d.accountId,
            d.month,
            d.requestId,
            d.amountNanos,
            d.subAccountId,
            d.tag,
            d.expiresAt,
            stored.occurredAt,
            settled ? 'settled' : 'open',
            settled ? stored.occurredAt : null,
          ],
        );
        return;
      }
      case 'SpendSettled':
        if ((stored.data as { reserved?: unknown }).reserved !== undefined) return;
        // Also after a release: a late settlement still charged the request, and the hold reads as settled.
        await sql.query(
          `UPDATE ${t.holds} SET status = 'settled', ended_at = $2 WHERE hold_id = $1 AND status <> 'settled'`,
          [event.data.holdId, stored.occurredAt],
        );
        return;
      case 'SpendReleased':
        await sql.query(
          `UPDATE ${t.holds} SET status = $2, ended_at = $3 WHERE hold_id = $1 AND status = 'open'`,
          [event.data.holdId, event.data.reason, stored.occurredAt],
        );
        return;
      default:
        return;
    }
  },
};

/** Accounts that hold expired, unsettled holds. */
export async function accountsWithExpiredHolds(sql: Sql, now: Date): Promise<string[]> {
  const { rows } = await sql.query<{ account_id: string }>(
    `SELECT DISTINCT account_id FROM holds WHERE status = 'open' AND expires_at <= $1`,
    [now],
  );
  return rows.map((r) => r.account_id);
}
