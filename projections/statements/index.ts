import { guardTable } from '../guard.ts';
import { firstOfEach, isCharge, slices, valuesList } from '../rows.ts';
import type { Folded, Projection, Sql } from '../types.ts';

/** Price-line items a statement counts as input or output tokens. */
const INPUT_ITEMS = new Set(['input_tokens', 'cached_input_tokens', 'cache_write_tokens']);
const OUTPUT_ITEMS = new Set(['output_tokens']);

/**
 * What each sub-account was charged, in its own price (docs/billing.md, Reselling), per budget month, UTC day and
 * model: requests, units (tokens for chat) and input and output tokens, the customer's price and the account's
 * cost. The source of `GET /v1/sub-accounts/{id}/statement` and of a sub-account's spending this period. The day is
 * the one a charge records for its renewing cap (its UTC day, by the gateway's clock), else the day it was stored. An
 * overrun adds money and no request, under the model of the charge it overran.
 */
export const statementsProjection: Projection = {
  name: 'statements',
  version: 1,
  tables: {
    statement_lines: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      account_id text NOT NULL,
      sub_account_id text NOT NULL,
      month text NOT NULL,
      day date NOT NULL,
      model text NOT NULL,
      requests bigint NOT NULL,
      units bigint NOT NULL,
      input_tokens bigint NOT NULL,
      output_tokens bigint NOT NULL,
      price_nanos numeric(38, 0) NOT NULL,
      cost_nanos numeric(38, 0) NOT NULL,
      PRIMARY KEY (account_id, sub_account_id, month, day, model)
    )`,
    statement_events: guardTable,
  },
  canHandle: ['SpendSettled', 'SpendOverrun'],
  evolve: (sql, t, event, stored) => foldStatements(sql, t, [{ event, stored }]),
  evolveRun: foldStatements,
};

const COLUMNS = [
  ['event_id', 'uuid'],
  ['account_id', 'text'],
  ['sub_account_id', 'text'],
  ['month', 'text'],
  ['day', 'date'],
  ['model', 'text'],
  ['requests', 'bigint'],
  ['units', 'bigint'],
  ['input_tokens', 'bigint'],
  ['output_tokens', 'bigint'],
  ['price_nanos', 'numeric'],
  ['hold_id', 'text'],
  ['cost_nanos', 'numeric'],
] as const;

/**
 * Folds a run of sub-accounts' charges: each line is written once, by the sum of the events folded for the first
 * time (a replay changes nothing). An overrun written before it carried its model finds it in the settled charge of
 * its hold, as usage does.
 */
async function foldStatements(sql: Sql, t: Record<string, string>, items: readonly Folded[]): Promise<void> {
  const resold = items.filter((item) => isCharge(item) && subAccountOf(item) !== null);
  for (const slice of slices(firstOfEach(resold))) {
    const { text, values } = valuesList(
      slice.map(lineRow),
      COLUMNS.map(([, type]) => type),
    );
    await sql.query(
      `WITH v (${COLUMNS.map(([name]) => name).join(', ')}) AS (VALUES ${text}),
       first AS (
         INSERT INTO ${t.statement_events} (event_id) SELECT event_id FROM v ON CONFLICT DO NOTHING RETURNING event_id)
       INSERT INTO ${t.statement_lines} (account_id, sub_account_id, month, day, model, requests, units, input_tokens,
         output_tokens, price_nanos, cost_nanos)
       SELECT account_id, sub_account_id, month, day, charged_model, sum(requests), sum(units), sum(input_tokens),
         sum(output_tokens), sum(price_nanos), sum(cost_nanos)
       FROM (SELECT v.*, coalesce(v.model, (SELECT c.model FROM charges c WHERE c.account_id = v.account_id
               AND c.month = v.month AND c.hold_id = v.hold_id AND c.kind = 'settled' LIMIT 1), '') AS charged_model
             FROM v JOIN first USING (event_id)) AS fresh
       GROUP BY 1, 2, 3, 4, 5
       ON CONFLICT (account_id, sub_account_id, month, day, model) DO UPDATE SET
         requests = ${t.statement_lines}.requests + EXCLUDED.requests,
         units = ${t.statement_lines}.units + EXCLUDED.units,
         input_tokens = ${t.statement_lines}.input_tokens + EXCLUDED.input_tokens,
         output_tokens = ${t.statement_lines}.output_tokens + EXCLUDED.output_tokens,
         price_nanos = ${t.statement_lines}.price_nanos + EXCLUDED.price_nanos,
         cost_nanos = ${t.statement_lines}.cost_nanos + EXCLUDED.cost_nanos`,
      values,
    );
  }
}

function subAccountOf({ event }: Folded): string | null {
  return event.type === 'SpendSettled' || event.type === 'SpendOverrun' ? event.data.subAccountId : null;
}

function lineRow({ event, stored }: Folded): unknown[] {
  if (event.type !== 'SpendSettled' && event.type !== 'SpendOverrun')
    throw new Error(`not a charge: ${event.type}`);
  const d = event.data;
  const settled = event.type === 'SpendSettled' ? event.data : undefined;
  const cost = settled ? settled.chargedNanos : (d as { overrunNanos: string }).overrunNanos;
  const tokens = (items: Set<string>) =>
    (settled?.charge.lines ?? []).filter((l) => items.has(l.item)).reduce((sum, l) => sum + l.quantity, 0);
  return [
    stored.id,
    d.accountId,
    d.subAccountId,
    d.month,
    d.day ?? stored.occurredAt.toISOString().slice(0, 10),
    settled ? settled.charge.model : ((d as { model?: string }).model ?? null),
    settled ? 1 : 0,
    settled ? settled.charge.units : 0,
    tokens(INPUT_ITEMS),
    tokens(OUTPUT_ITEMS),
    d.priceNanos ?? cost,
    d.holdId,
    cost,
  ];
}

export interface StatementRow {
  day: string;
  model: string;
  requests: string;
  units: string;
  input_tokens: string;
  output_tokens: string;
  price_nanos: string;
  cost_nanos: string;
}

/**
 * A sub-account's charges of one budget month, per day and model, oldest first. A charge booked to the month on a day
 * of the month next to it (one made across midnight at a month's end) is shown on the month's nearest day.
 */
export async function statementLines(
  sql: Sql,
  accountId: string,
  subAccountId: string,
  month: string,
): Promise<StatementRow[]> {
  const { rows } = await sql.query<StatementRow & Record<string, unknown>>(
    `WITH bounds AS (SELECT ($3::text || '-01')::date AS first,
                            (($3::text || '-01')::date + interval '1 month' - interval '1 day')::date AS last)
     SELECT to_char(least(greatest(day, bounds.first), bounds.last), 'YYYY-MM-DD') AS day, model,
            sum(requests)::text AS requests, sum(units)::text AS units, sum(input_tokens)::text AS input_tokens,
            sum(output_tokens)::text AS output_tokens, sum(price_nanos)::text AS price_nanos,
            sum(cost_nanos)::text AS cost_nanos
     FROM statement_lines, bounds
     WHERE account_id = $1 AND sub_account_id = $2 AND month = $3
     GROUP BY 1, 2 ORDER BY 1, 2`,
    [accountId, subAccountId, month],
  );
  return rows;
}

export interface SpendingDay {
  sub_account_id: string;
  month: string;
  day: string;
  price_nanos: string;
}

/** The account's sub-accounts' spending (in their price) per budget month and day, from `sinceDay` on. */
export async function spendingSince(
  sql: Sql,
  accountId: string,
  sinceDay: string,
  subAccountId?: string,
): Promise<SpendingDay[]> {
  const { rows } = await sql.query<SpendingDay & Record<string, unknown>>(
    `SELECT sub_account_id, month, to_char(day, 'YYYY-MM-DD') AS day, sum(price_nanos)::text AS price_nanos
     FROM statement_lines
     WHERE account_id = $1 AND (day >= $2::date OR month >= substr($2::text, 1, 7))
       AND ($3::text IS NULL OR sub_account_id = $3)
     GROUP BY 1, 2, 3`,
    [accountId, sinceDay, subAccountId ?? null],
  );
  return rows;
}

/** Each sub-account's price total per budget month (the audit holds it against the log). */
export async function statementTotals(
  sql: Sql,
  accountId: string | undefined,
): Promise<{ account_id: string; sub_account_id: string; month: string; price_nanos: string }[]> {
  const { rows } = await sql.query<{
    account_id: string;
    sub_account_id: string;
    month: string;
    price_nanos: string;
  }>(
    `SELECT account_id, sub_account_id, month, sum(price_nanos)::text AS price_nanos FROM statement_lines
     WHERE $1::text IS NULL OR account_id = $1 GROUP BY 1, 2, 3`,
    [accountId ?? null],
  );
  return rows;
}
