import type { Sql } from '../../projections/types.ts';

/** Read-model queries of the dashboard's pages; every amount is summed in SQL, in nano-dollars. */

export interface Scope {
  accountId: string;
  /** A sub-account's view: only its own charges. */
  subAccountId: string | null;
}

export type SpendGroup = 'tag' | 'model' | 'sub_account_id';

export interface SpendLine {
  key: string;
  requests: number;
  /** What the account paid. */
  cost_nanos: string;
  /** What the requester was charged: a sub-account's price (docs/billing.md, Reselling), else the cost. */
  price_nanos: string;
  units: number;
}

/**
 * The charges' column a scope sees as its spending: a sub-account's own view is in its price, never in what its
 * account pays (which would show the account's margin to its customer).
 */
const spent = (scope: Scope) => (scope.subAccountId ? 'price_nanos' : 'charged_nanos');

/** One month's charges by tag, model or sub-account, from the `charges` table of the balances read model. */
export async function spendBy(
  sql: Sql,
  scope: Scope,
  month: string,
  group: SpendGroup,
): Promise<SpendLine[]> {
  const { rows } = await sql.query<{
    key: string;
    requests: string;
    cost_nanos: string;
    price_nanos: string;
    units: string;
  }>(
    `SELECT coalesce(${group}, '') AS key, count(*) FILTER (WHERE kind = 'settled')::text AS requests,
       sum(charged_nanos)::text AS cost_nanos, sum(price_nanos)::text AS price_nanos,
       coalesce(sum(units), 0)::text AS units
     FROM charges WHERE account_id = $1 AND month = $2 AND ($3::text IS NULL OR sub_account_id = $3)
     GROUP BY 1 ORDER BY sum(${spent(scope)}) DESC, 1`,
    [scope.accountId, month, scope.subAccountId],
  );
  return rows.map((r) => ({
    key: r.key,
    requests: Number(r.requests),
    cost_nanos: r.cost_nanos,
    price_nanos: r.price_nanos,
    units: Number(r.units),
  }));
}

export async function monthSpend(sql: Sql, scope: Scope, month: string): Promise<bigint> {
  const { rows } = await sql.query<{ total: string | null }>(
    `SELECT sum(${spent(scope)})::text AS total FROM charges
     WHERE account_id = $1 AND month = $2 AND ($3::text IS NULL OR sub_account_id = $3)`,
    [scope.accountId, month, scope.subAccountId],
  );
  return BigInt(rows[0]?.total ?? '0');
}

export interface DailySeries {
  /** UTC days, as epoch seconds of their midnight. */
  days: number[];
  /** Per series: exact nano-dollars per day, and the same in cents as numbers for the chart to plot. */
  series: { label: string; nanos: string[]; cents: number[] }[];
}

/** Spend per UTC day of the last `days` days, one series per tag or model (the largest eight, then "other"). */
export async function dailySpend(
  sql: Sql,
  scope: Scope,
  group: 'tag' | 'model',
  now: Date,
  days = 30,
): Promise<DailySeries> {
  const end = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const start = end - (days - 1) * 86_400_000;
  const { rows } = await sql.query<{ day: string; key: string; cost_nanos: string }>(
    `SELECT to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, coalesce(${group}, '') AS key,
       sum(${spent(scope)})::text AS cost_nanos
     FROM charges WHERE account_id = $1 AND ($2::text IS NULL OR sub_account_id = $2) AND occurred_at >= $3
     GROUP BY 1, 2`,
    [scope.accountId, scope.subAccountId, new Date(start)],
  );
  const dayList = Array.from({ length: days }, (_, i) => (start + i * 86_400_000) / 1000);
  const totals = new Map<string, bigint>();
  for (const row of rows) totals.set(row.key, (totals.get(row.key) ?? 0n) + BigInt(row.cost_nanos));
  const ranked = [...totals.entries()]
    .sort((a, b) => (b[1] > a[1] ? 1 : b[1] < a[1] ? -1 : 0))
    .map(([k]) => k);
  const shown = new Set(ranked.slice(0, 8));
  const byKey = new Map<string, bigint[]>();
  for (const row of rows) {
    const key = shown.has(row.key) ? row.key : '(other)';
    const line = byKey.get(key) ?? Array.from({ length: days }, () => 0n);
    const at = Date.parse(`${row.day}T00:00:00Z`);
    const index = Math.round((at - start) / 86_400_000);
    if (index >= 0 && index < days) line[index] = (line[index] as bigint) + BigInt(row.cost_nanos);
    byKey.set(key, line);
  }
  return {
    days: dayList,
    series: [...byKey.entries()].map(([key, nanos]) => ({
      label: key === '' ? (group === 'tag' ? '(untagged)' : '(none)') : key,
      nanos: nanos.map(String),
      // For plotting only: figures shown as text come from `nanos`.
      cents: nanos.map((n) => Number(n) / 10_000_000),
    })),
  };
}

export interface TopUpLine {
  kind: 'top-up' | 'refund' | 'adjustment';
  reference: string;
  amount_nanos: string;
  occurred_at: Date;
}

export async function moneyIn(sql: Sql, accountId: string, limit = 100): Promise<TopUpLine[]> {
  const { rows } = await sql.query<TopUpLine & Record<string, unknown>>(
    `(SELECT 'top-up' AS kind, reference, amount_nanos::text, occurred_at FROM top_ups WHERE account_id = $1)
     UNION ALL
     (SELECT 'refund' AS kind, reference, (-amount_nanos)::text, occurred_at FROM top_up_reversals
      WHERE account_id = $1)
     UNION ALL
     (SELECT 'adjustment' AS kind, reference, amount_nanos::text, occurred_at FROM adjustments WHERE account_id = $1)
     ORDER BY occurred_at DESC LIMIT $2`,
    [accountId, limit],
  );
  return rows;
}

export interface ChargeLine {
  request_id: string;
  kind: string;
  model: string | null;
  tag: string | null;
  sub_account_id: string | null;
  charged_nanos: string;
  occurred_at: Date;
}

export async function recentCharges(sql: Sql, accountId: string, limit = 50): Promise<ChargeLine[]> {
  const { rows } = await sql.query<ChargeLine & Record<string, unknown>>(
    `SELECT request_id, kind, model, tag, sub_account_id, charged_nanos::text, occurred_at FROM charges
     WHERE account_id = $1 ORDER BY occurred_at DESC LIMIT $2`,
    [accountId, limit],
  );
  return rows;
}

export interface BalanceLine {
  account_id: string;
  balance_nanos: string;
  topped_up_nanos: string;
  adjusted_nanos: string;
  charged_nanos: string;
  top_up_count: number;
}

export async function balanceOf(sql: Sql, accountId: string): Promise<BalanceLine | undefined> {
  return (await balances(sql, accountId))[0];
}

export async function balances(sql: Sql, accountId?: string): Promise<BalanceLine[]> {
  const { rows } = await sql.query<BalanceLine & Record<string, unknown>>(
    `SELECT account_id, balance_nanos::text, topped_up_nanos::text, adjusted_nanos::text, charged_nanos::text,
            top_up_count
     FROM balances WHERE $1::text IS NULL OR account_id = $1 ORDER BY account_id`,
    [accountId ?? null],
  );
  return rows;
}

export async function latestTopUps(sql: Sql, limit = 50) {
  const { rows } = await sql.query<{
    account_id: string;
    reference: string;
    amount_nanos: string;
    occurred_at: Date;
  }>(
    `SELECT account_id, reference, amount_nanos::text, occurred_at FROM top_ups ORDER BY occurred_at DESC LIMIT $1`,
    [limit],
  );
  return rows;
}
