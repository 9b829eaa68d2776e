import type { Projection, Sql } from '../types.ts';

/**
 * Prepaid balance per account, in nano-dollars, and the ledger of top-ups behind it. A top-up is applied only
 * when its reference row is new, so a replayed event changes nothing.
 */
export const balancesProjection: Projection = {
  name: 'balances',
  tables: {
    balances: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      account_id text PRIMARY KEY,
      balance_nanos numeric(38, 0) NOT NULL,
      topped_up_nanos numeric(38, 0) NOT NULL,
      top_up_count integer NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    top_ups: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      account_id text NOT NULL,
      reference text NOT NULL,
      amount_nanos numeric(38, 0) NOT NULL,
      event_id uuid NOT NULL,
      occurred_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, reference)
    )`,
  },
  canHandle: ['AccountOpened', 'AccountToppedUp'],
  async evolve(sql, t, event, stored) {
    switch (event.type) {
      case 'AccountOpened':
        await sql.query(
          `INSERT INTO ${t.balances} (account_id, balance_nanos, topped_up_nanos, top_up_count, updated_at)
           VALUES ($1, 0, 0, 0, $2) ON CONFLICT (account_id) DO NOTHING`,
          [event.data.accountId, stored.occurredAt],
        );
        return;
      case 'AccountToppedUp': {
        const inserted = await sql.query(
          `INSERT INTO ${t.top_ups} (account_id, reference, amount_nanos, event_id, occurred_at)
           VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
          [event.data.accountId, event.data.reference, event.data.amountNanos, stored.id, stored.occurredAt],
        );
        if (inserted.rowCount !== 1) return;
        await sql.query(
          `UPDATE ${t.balances} SET balance_nanos = balance_nanos + $2, topped_up_nanos = topped_up_nanos + $2,
             top_up_count = top_up_count + 1, updated_at = $3
           WHERE account_id = $1`,
          [event.data.accountId, event.data.amountNanos, stored.occurredAt],
        );
        return;
      }
      default:
        return;
    }
  },
};

export async function balanceNanos(sql: Sql, accountId: string): Promise<bigint | undefined> {
  const { rows } = await sql.query<{ balance_nanos: string }>(
    'SELECT balance_nanos FROM balances WHERE account_id = $1',
    [accountId],
  );
  return rows[0] ? BigInt(rows[0].balance_nanos) : undefined;
}
