import type { Folded, Projection, Sql } from '../types.ts';
import { foldCharges } from './charges.ts';

/**
 * Prepaid balance per account, in nano-dollars, and the ledger of top-ups behind it. A top-up is applied only
 * when its reference row is new, so a replayed event changes nothing; so is a reversal (a refund), by its event
 * id, and an adjustment, by its reference. `topped_up_nanos` is net of reversals; the operator's adjustments are
 * `adjusted_nanos` (credits less debits): balance = top-ups + adjustments − charges.
 */
export const balancesProjection: Projection = {
  // 4: adjusted_nanos and the adjustments table. 5: charges' price_nanos. 6: charges' credential.
  version: 6,
  name: 'balances',
  tables: {
    balances: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      account_id text PRIMARY KEY,
      balance_nanos numeric(38, 0) NOT NULL,
      topped_up_nanos numeric(38, 0) NOT NULL,
      adjusted_nanos numeric(38, 0) NOT NULL DEFAULT 0,
      charged_nanos numeric(38, 0) NOT NULL,
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
    top_up_reversals: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      event_id uuid PRIMARY KEY,
      account_id text NOT NULL,
      reference text NOT NULL,
      amount_nanos numeric(38, 0) NOT NULL,
      refunded_nanos numeric(38, 0) NOT NULL,
      refund_reference text NOT NULL,
      occurred_at timestamptz NOT NULL
    );
    CREATE INDEX ON ${t} (account_id, occurred_at)`,
    adjustments: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      account_id text NOT NULL,
      reference text NOT NULL,
      month text NOT NULL,
      amount_nanos numeric(38, 0) NOT NULL,
      reason text NOT NULL,
      reverses text,
      event_id uuid NOT NULL,
      occurred_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, reference)
    );
    CREATE INDEX ON ${t} (account_id, month, occurred_at)`,
    charges: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      event_id uuid PRIMARY KEY,
      account_id text NOT NULL,
      month text NOT NULL,
      kind text NOT NULL,
      request_id text NOT NULL,
      hold_id text NOT NULL,
      sub_account_id text,
      tag text,
      model text,
      provider text,
      lines jsonb,
      pass_through_nanos numeric(38, 0),
      fee_nanos numeric(38, 0),
      discount text,
      usage_reported boolean,
      units bigint,
      held_nanos numeric(38, 0),
      charged_nanos numeric(38, 0) NOT NULL,
      occurred_at timestamptz NOT NULL,
      price_nanos numeric(38, 0) NOT NULL,
      credential text
    );
    CREATE INDEX ON ${t} (account_id, month, occurred_at);
    CREATE INDEX ON ${t} (provider, occurred_at) WHERE kind = 'settled'`,
  },
  canHandle: [
    'AccountOpened',
    'AccountToppedUp',
    'AccountTopUpReversed',
    'BalanceAdjusted',
    'SpendSettled',
    'SpendOverrun',
  ],
  // A run's charges are booked together; the rare events between them keep their place in the order.
  async evolveRun(sql, t, items) {
    let charges: Folded[] = [];
    for (const item of items) {
      if (item.event.type === 'SpendSettled' || item.event.type === 'SpendOverrun') {
        charges.push(item);
        continue;
      }
      await foldCharges(sql, t, charges);
      charges = [];
      await balancesProjection.evolve(sql, t, item.event, item.stored);
    }
    await foldCharges(sql, t, charges);
  },
  async evolve(sql, t, event, stored) {
    switch (event.type) {
      case 'AccountOpened':
        await sql.query(
          `INSERT INTO ${t.balances} (account_id, balance_nanos, topped_up_nanos, charged_nanos, top_up_count, updated_at)
           VALUES ($1, 0, 0, 0, 0, $2) ON CONFLICT (account_id) DO NOTHING`,
          [event.data.accountId, stored.occurredAt],
        );
        return;
      case 'AccountToppedUp':
        // The balance moves only when the top-up row is new (a replayed event changes nothing): one statement.
        await sql.query(
          `WITH inserted AS (
             INSERT INTO ${t.top_ups} (account_id, reference, amount_nanos, event_id, occurred_at)
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING amount_nanos)
           UPDATE ${t.balances} SET balance_nanos = balance_nanos + $3::numeric,
             topped_up_nanos = topped_up_nanos + $3::numeric, top_up_count = top_up_count + 1, updated_at = $5
           WHERE account_id = $1 AND EXISTS (SELECT 1 FROM inserted)`,
          [event.data.accountId, event.data.reference, event.data.amountNanos, stored.id, stored.occurredAt],
        );
        return;
      case 'AccountTopUpReversed': {
        const d = event.data;
        await sql.query(
          `WITH inserted AS (
             INSERT INTO ${t.top_up_reversals} (event_id, account_id, reference, amount_nanos, refunded_nanos,
               refund_reference, occurred_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING amount_nanos)
           UPDATE ${t.balances} SET balance_nanos = balance_nanos - $4::numeric,
             topped_up_nanos = topped_up_nanos - $4::numeric, updated_at = $7
           WHERE account_id = $2 AND EXISTS (SELECT 1 FROM inserted)`,
          [
            stored.id,
            d.accountId,
            d.reference,
            d.amountNanos,
            d.refundedNanos,
            d.refundReference,
            stored.occurredAt,
          ],
        );
        return;
      }
      case 'BalanceAdjusted': {
        const d = event.data;
        await sql.query(
          `WITH inserted AS (
             INSERT INTO ${t.adjustments} (account_id, reference, month, amount_nanos, reason, reverses, event_id,
               occurred_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING RETURNING amount_nanos)
           UPDATE ${t.balances} SET balance_nanos = balance_nanos + $4::numeric,
             adjusted_nanos = adjusted_nanos + $4::numeric, updated_at = $8
           WHERE account_id = $1 AND EXISTS (SELECT 1 FROM inserted)`,
          [
            d.accountId,
            d.reference,
            d.month,
            d.amountNanos,
            d.reason,
            d.reverses ?? null,
            stored.id,
            stored.occurredAt,
          ],
        );
        return;
      }
      case 'SpendSettled':
      case 'SpendOverrun':
        await foldCharges(sql, t, [{ event, stored }]);
        return;
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

/**
 * What was charged in all (in the requester's money: a sub-account's price) per request of the gateway's own work
 * whose id starts with `prefix` (a batch's lines, an eval run's calls: the ids the gateway derives from that batch's
 * or eval's id), for the requests settled at a batch price, as that work always is, or at the fee alone (`byok`) for
 * a batch line served on its requester's own provider key (with the overruns of those holds). Request ids are the
 * gateway's alone (a client's `X-Request-Id` is kept apart), so no client's request has such an id; the price also
 * leaves out a client's request recorded under one by a version that took the client's id as the request's (those
 * versions had no own keys, so none of theirs is at `byok`).
 */
export async function workChargesByPrefix(
  sql: Sql,
  accountId: string,
  prefix: string,
): Promise<Map<string, bigint>> {
  const { rows } = await sql.query<{ request_id: string; charged: string }>(
    `WITH work AS (SELECT * FROM charges WHERE account_id = $1 AND starts_with(request_id, $2))
     SELECT request_id, sum(price_nanos)::text AS charged FROM work
     WHERE hold_id IN (SELECT hold_id FROM work
                       WHERE kind = 'settled' AND discount IN ('batch', 'batch_api', 'batch_fee', 'byok'))
     GROUP BY request_id`,
    [accountId, prefix],
  );
  return new Map(rows.map((row) => [row.request_id, BigInt(row.charged)]));
}
