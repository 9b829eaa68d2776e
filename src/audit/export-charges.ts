import { DomainError } from '../../commands/errors.ts';
import type { Sql } from '../../projections/types.ts';
import { type CsvCell, csvNumber, toCsv } from './csv.ts';
import { nanosToUsd } from './decimal.ts';

export const CHARGE_COLUMNS = [
  'occurred_at',
  'request_id',
  'hold_id',
  'kind',
  'sub_account_id',
  'tag',
  'model',
  'provider',
  'input_tokens',
  'output_tokens',
  'pass_through_nanos',
  'fee_nanos',
  'discount',
  'charged_nanos',
  'charged_usd',
  'usage_reported',
  'adjustment_nanos',
  'adjustment_usd',
  'reference',
  'reason',
  'reverses',
] as const;

type Column = (typeof CHARGE_COLUMNS)[number];

/** A line of the columns given, the others empty (an adjustment has no charge columns, a charge no adjustment's). */
const line = (cells: Partial<Record<Column, CsvCell>>): CsvCell[] =>
  CHARGE_COLUMNS.map((c) => cells[c] ?? '');

interface ChargeRow {
  occurred_at: Date;
  request_id: string;
  hold_id: string;
  kind: string;
  sub_account_id: string | null;
  tag: string | null;
  model: string | null;
  provider: string | null;
  lines: { item: string; quantity: number }[] | null;
  pass_through_nanos: string | null;
  fee_nanos: string | null;
  discount: string | null;
  charged_nanos: string;
  usage_reported: boolean | null;
}

/** The quantity of one item across a charge's price lines; empty when the charge has no such line. */
function quantity(lines: ChargeRow['lines'], item: string): CsvCell {
  const matching = (lines ?? []).filter((l) => l.item === item);
  return matching.length === 0 ? '' : csvNumber(matching.reduce((sum, l) => sum + l.quantity, 0));
}

const amount = (nanos: string | null): CsvCell => (nanos === null ? '' : csvNumber(nanos));

/**
 * One month's charges of an account, one CSV line each, from the `charges` read model (the month a charge is
 * booked to, as the ledger keeps it). An overrun is its own line (kind `overrun`) after its settlement; it has
 * no price lines. The operator's adjustments of that month are lines of kind `adjustment`, in time order among the
 * charges: `adjustment_nanos` signed (a credit positive, a debit negative), their reference, reason and the top-up a
 * reversal gives back; their charge columns are empty, so the charged columns still add up to the charges.
 * Amounts stay exact: nano-dollars as integers, dollars as decimals with nine places. Text a client or the operator
 * chose (a tag, a request id, a reason) is escaped where a spreadsheet would read it as a formula (./csv.ts).
 */
export async function exportChargesCsv(sql: Sql, accountId: string, month: string): Promise<string> {
  const account = await sql.query('SELECT 1 FROM accounts WHERE account_id = $1', [accountId]);
  if (account.rows.length === 0)
    throw new DomainError('not_found', `account ${accountId} not found`, 'account');
  const { rows } = await sql.query<ChargeRow & Record<string, unknown>>(
    `SELECT occurred_at, request_id, hold_id, kind, sub_account_id, tag, model, provider, lines,
            pass_through_nanos::text, fee_nanos::text, discount, charged_nanos::text, usage_reported
     FROM charges WHERE account_id = $1 AND month = $2
     ORDER BY occurred_at, hold_id, CASE kind WHEN 'settled' THEN 0 ELSE 1 END, event_id`,
    [accountId, month],
  );
  const charges = rows.map((r) =>
    line({
      occurred_at: r.occurred_at.toISOString(),
      request_id: r.request_id,
      hold_id: r.hold_id,
      kind: r.kind,
      sub_account_id: r.sub_account_id ?? '',
      tag: r.tag ?? '',
      model: r.model ?? '',
      provider: r.provider ?? '',
      input_tokens: quantity(r.lines, 'input_tokens'),
      output_tokens: quantity(r.lines, 'output_tokens'),
      pass_through_nanos: amount(r.pass_through_nanos),
      fee_nanos: amount(r.fee_nanos),
      discount: r.discount ?? '',
      charged_nanos: csvNumber(r.charged_nanos),
      charged_usd: csvNumber(nanosToUsd(BigInt(r.charged_nanos))),
      usage_reported: r.usage_reported === null ? '' : String(r.usage_reported),
    }),
  );
  const adjustments = await adjustmentLines(sql, accountId, month);
  const at = (cells: CsvCell[]) => cells[0] as string;
  // ISO times sort as text; the sort is stable, so charges keep their order among themselves.
  const lines = [...charges, ...adjustments].sort((a, b) => (at(a) < at(b) ? -1 : at(a) > at(b) ? 1 : 0));
  return toCsv([[...CHARGE_COLUMNS], ...lines]);
}

async function adjustmentLines(sql: Sql, accountId: string, month: string): Promise<CsvCell[][]> {
  const { rows } = await sql.query<{
    occurred_at: Date;
    reference: string;
    amount_nanos: string;
    reason: string;
    reverses: string | null;
  }>(
    `SELECT occurred_at, reference, amount_nanos::text, reason, reverses FROM adjustments
     WHERE account_id = $1 AND month = $2 ORDER BY occurred_at, reference`,
    [accountId, month],
  );
  return rows.map((r) =>
    line({
      occurred_at: r.occurred_at.toISOString(),
      kind: 'adjustment',
      adjustment_nanos: csvNumber(r.amount_nanos),
      adjustment_usd: csvNumber(nanosToUsd(BigInt(r.amount_nanos))),
      reference: r.reference,
      reason: r.reason,
      reverses: r.reverses ?? '',
    }),
  );
}
