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
] as const;

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
 * no price lines. Amounts stay exact: nano-dollars as integers, dollars as decimals with nine places. Text a
 * client chose (a tag, a request id) is escaped where a spreadsheet would read it as a formula (./csv.ts).
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
  const lines = rows.map((r): CsvCell[] => [
    r.occurred_at.toISOString(),
    r.request_id,
    r.hold_id,
    r.kind,
    r.sub_account_id ?? '',
    r.tag ?? '',
    r.model ?? '',
    r.provider ?? '',
    quantity(r.lines, 'input_tokens'),
    quantity(r.lines, 'output_tokens'),
    amount(r.pass_through_nanos),
    amount(r.fee_nanos),
    r.discount ?? '',
    csvNumber(r.charged_nanos),
    csvNumber(nanosToUsd(BigInt(r.charged_nanos))),
    r.usage_reported === null ? '' : String(r.usage_reported),
  ]);
  return toCsv([[...CHARGE_COLUMNS], ...lines]);
}
