import { guardTable } from '../guard.ts';
import { firstOfEach, isCharge, slices, valuesList } from '../rows.ts';
import type { Folded, Projection, Sql } from '../types.ts';

/**
 * Usage per account, month, sub-account ('' for the account's own keys), tag ('' for untagged) and label (a
 * sub-account's own tag beside its scope tag, '' when none), per account, month, sub-account and model, and per UTC
 * day: requests, charged nano-dollars, and units (tokens for chat). An overrun adds money and no request, under the
 * model of the charge it overran. `cost_nanos` is what the account paid, `price_nanos` what the requester was
 * charged: a sub-account's price (docs/billing.md, Reselling), the same as the cost for the account's own keys.
 */
export const usageProjection: Projection = {
  name: 'usage',
  version: 4,
  tables: {
    usage: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      account_id text NOT NULL,
      month text NOT NULL,
      sub_account_id text NOT NULL,
      tag text NOT NULL,
      label text NOT NULL DEFAULT '',
      requests bigint NOT NULL,
      cost_nanos numeric(38, 0) NOT NULL,
      price_nanos numeric(38, 0) NOT NULL,
      units bigint NOT NULL,
      PRIMARY KEY (account_id, month, sub_account_id, tag, label)
    )`,
    usage_daily: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      account_id text NOT NULL,
      day date NOT NULL,
      requests bigint NOT NULL,
      cost_nanos numeric(38, 0) NOT NULL,
      units bigint NOT NULL,
      PRIMARY KEY (account_id, day)
    )`,
    usage_models: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      account_id text NOT NULL,
      month text NOT NULL,
      sub_account_id text NOT NULL,
      model text NOT NULL,
      requests bigint NOT NULL,
      cost_nanos numeric(38, 0) NOT NULL,
      price_nanos numeric(38, 0) NOT NULL,
      PRIMARY KEY (account_id, month, sub_account_id, model)
    )`,
    usage_events: guardTable,
  },
  canHandle: ['SpendSettled', 'SpendOverrun'],
  evolve: (sql, t, event, stored) => foldUsage(sql, t, [{ event, stored }]),
  evolveRun: foldUsage,
};

const COLUMNS = [
  ['event_id', 'uuid'],
  ['account_id', 'text'],
  ['month', 'text'],
  ['sub_account_id', 'text'],
  ['tag', 'text'],
  ['label', 'text'],
  ['requests', 'bigint'],
  ['cost_nanos', 'numeric'],
  ['price_nanos', 'numeric'],
  ['units', 'bigint'],
  ['occurred_at', 'timestamptz'],
  ['model', 'text'],
  ['hold_id', 'text'],
] as const;

/**
 * Folds a run of charges: each counter row is written once, by the sum of the events folded for the first time (a
 * replay changes nothing). An overrun written before it carried its model finds it in the settled charge of its hold
 * (the balances projection's table; only rebuilds fold such events, and the charges are read by then).
 */
async function foldUsage(sql: Sql, t: Record<string, string>, items: readonly Folded[]): Promise<void> {
  for (const slice of slices(firstOfEach(items.filter(isCharge)))) {
    const { text, values } = valuesList(
      slice.map(usageRow),
      COLUMNS.map(([, type]) => type),
    );
    await sql.query(
      `WITH v (${COLUMNS.map(([name]) => name).join(', ')}) AS (VALUES ${text}),
       first AS (
         INSERT INTO ${t.usage_events} (event_id) SELECT event_id FROM v ON CONFLICT DO NOTHING RETURNING event_id),
       fresh AS (
         SELECT v.*, coalesce(v.model, (SELECT c.model FROM charges c WHERE c.account_id = v.account_id
           AND c.month = v.month AND c.hold_id = v.hold_id AND c.kind = 'settled' LIMIT 1), '') AS charged_model
         FROM v JOIN first USING (event_id)),
       models AS (
         INSERT INTO ${t.usage_models} (account_id, month, sub_account_id, model, requests, cost_nanos, price_nanos)
         SELECT account_id, month, sub_account_id, charged_model, sum(requests), sum(cost_nanos), sum(price_nanos)
         FROM fresh GROUP BY 1, 2, 3, 4
         ON CONFLICT (account_id, month, sub_account_id, model) DO UPDATE SET
           requests = ${t.usage_models}.requests + EXCLUDED.requests,
           cost_nanos = ${t.usage_models}.cost_nanos + EXCLUDED.cost_nanos,
           price_nanos = ${t.usage_models}.price_nanos + EXCLUDED.price_nanos),
       monthly AS (
         INSERT INTO ${t.usage} (account_id, month, sub_account_id, tag, label, requests, cost_nanos, price_nanos, units)
         SELECT account_id, month, sub_account_id, tag, label, sum(requests), sum(cost_nanos), sum(price_nanos),
           sum(units)
         FROM fresh GROUP BY 1, 2, 3, 4, 5
         ON CONFLICT (account_id, month, sub_account_id, tag, label) DO UPDATE SET requests = ${t.usage}.requests + EXCLUDED.requests,
           cost_nanos = ${t.usage}.cost_nanos + EXCLUDED.cost_nanos, price_nanos = ${t.usage}.price_nanos + EXCLUDED.price_nanos,
           units = ${t.usage}.units + EXCLUDED.units)
       INSERT INTO ${t.usage_daily} (account_id, day, requests, cost_nanos, units)
       SELECT account_id, (occurred_at AT TIME ZONE 'UTC')::date, sum(requests), sum(cost_nanos), sum(units)
       FROM fresh GROUP BY 1, 2
       ON CONFLICT (account_id, day) DO UPDATE SET requests = ${t.usage_daily}.requests + EXCLUDED.requests,
         cost_nanos = ${t.usage_daily}.cost_nanos + EXCLUDED.cost_nanos, units = ${t.usage_daily}.units + EXCLUDED.units`,
      values,
    );
  }
}

function usageRow({ event, stored }: Folded): unknown[] {
  if (event.type !== 'SpendSettled' && event.type !== 'SpendOverrun')
    throw new Error(`not a charge: ${event.type}`);
  const settled = event.type === 'SpendSettled';
  const cost = settled ? event.data.chargedNanos : event.data.overrunNanos;
  return [
    stored.id,
    event.data.accountId,
    event.data.month,
    event.data.subAccountId ?? '',
    event.data.tag ?? '',
    event.data.label ?? '',
    settled ? 1 : 0,
    cost,
    event.data.priceNanos ?? cost,
    settled ? event.data.charge.units : 0,
    stored.occurredAt,
    settled ? event.data.charge.model : (event.data.model ?? null),
    event.data.holdId,
  ];
}

export interface ModelUsageRow {
  model: string;
  requests: string;
  /** What the account paid. */
  cost_nanos: string;
  /** What the requester was charged (a sub-account's price). */
  price_nanos: string;
}

/**
 * A month's (`YYYY-MM`, UTC) charges per model, most expensive first: every charge of the balance (shadow replays
 * and replay judges included, which never reach the request log), so the same money as the balance and by tag.
 */
export async function usageByModel(
  sql: Sql,
  owner: { accountId: string; subAccountId: string | null },
  month: string,
): Promise<ModelUsageRow[]> {
  const { rows } = await sql.query<ModelUsageRow & Record<string, unknown>>(
    `SELECT model, sum(requests)::text AS requests, sum(cost_nanos)::text AS cost_nanos,
            sum(price_nanos)::text AS price_nanos FROM usage_models
     WHERE account_id = $1 AND month = $3 AND ($2::text IS NULL OR sub_account_id = $2)
     GROUP BY model ORDER BY sum(cost_nanos) DESC, model`,
    [owner.accountId, owner.subAccountId ?? null, month],
  );
  return rows;
}

export interface UsageRow {
  key: string;
  requests: string;
  cost_nanos: string;
  price_nanos: string;
  units: string;
}

/**
 * One month's usage grouped by tag or by sub-account, optionally limited to one sub-account. `own_tag` groups a
 * sub-account's usage by the tags it sent itself (its label where it has one, else its scope tag), as the
 * sub-account sees it; `tag` is the account's view, the tags whose budgets were spent.
 */
export async function usageBy(
  sql: Sql,
  group: 'tag' | 'own_tag' | 'sub_account_id',
  accountId: string,
  month: string,
  subAccountId?: string,
): Promise<UsageRow[]> {
  const key = group === 'own_tag' ? `CASE WHEN label <> '' THEN label ELSE tag END` : group;
  const { rows } = await sql.query<UsageRow & Record<string, unknown>>(
    `SELECT ${key} AS key, sum(requests)::text AS requests, sum(cost_nanos)::text AS cost_nanos,
            sum(price_nanos)::text AS price_nanos, sum(units)::text AS units
     FROM usage WHERE account_id = $1 AND month = $2 AND ($3::text IS NULL OR sub_account_id = $3)
     GROUP BY 1 ORDER BY 1`,
    [accountId, month, subAccountId ?? null],
  );
  return rows;
}

/** Lifetime spending per sub-account of the account, or of the one sub-account given, in its price. */
export async function subAccountSpending(
  sql: Sql,
  accountId: string,
  subAccountId?: string,
): Promise<Map<string, bigint>> {
  const { rows } = await sql.query<{ sub_account_id: string; price_nanos: string }>(
    `SELECT sub_account_id, sum(price_nanos)::text AS price_nanos FROM usage
     WHERE account_id = $1 AND sub_account_id <> '' AND ($2::text IS NULL OR sub_account_id = $2)
     GROUP BY sub_account_id`,
    [accountId, subAccountId ?? null],
  );
  return new Map(rows.map((r) => [r.sub_account_id, BigInt(r.price_nanos)]));
}

export async function dailyUsage(sql: Sql, day: string) {
  const { rows } = await sql.query<{
    account_id: string;
    requests: string;
    cost_nanos: string;
    units: string;
  }>(
    'SELECT account_id, requests::text, cost_nanos::text, units::text FROM usage_daily WHERE day = $1::date',
    [day],
  );
  return rows;
}
