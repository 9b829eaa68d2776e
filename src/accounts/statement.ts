import { statementLines } from '../../projections/statements/index.ts';
import type { Sql } from '../../projections/types.ts';
import { type CsvCell, csvNumber, toCsv } from '../contracts/csv.ts';
import { nanosToCents } from '../contracts/money.ts';
import type { LiveSubAccount } from './live-state.ts';

interface Figures {
  requests: number;
  /** Tokens for chat, else the model's own unit (images, seconds, characters, search units). */
  units: number;
  input_tokens: number;
  output_tokens: number;
  /** The customer's price, in cents exact to the nano-dollar, and the same as an exact integer of nano-dollars. */
  cost_cents: number;
  cost_nanos: string;
}

export interface Statement {
  object: 'sub_account.statement';
  sub_account_id: string;
  name: string;
  external_ref: string | null;
  month: string;
  currency: 'usd';
  lines: (Figures & { date: string; model: string })[];
  total: Figures;
}

const NANOS_PER_DOLLAR = 1_000_000_000n;

/** Nano-dollars as exact dollars with nine places, as invoices and spreadsheets take them. */
const dollars = (nanos: bigint) =>
  `${nanos / NANOS_PER_DOLLAR}.${(nanos % NANOS_PER_DOLLAR).toString().padStart(9, '0')}`;

/**
 * What a sub-account was charged in one UTC month (its budget month), in its own price (docs/billing.md,
 * Reselling), per day and model, with totals: the sum of its charges in the ledger, overruns included, which
 * `gateway audit` holds the statements read model to.
 */
export async function statementOf(sql: Sql, sub: LiveSubAccount, month: string): Promise<Statement> {
  const rows = await statementLines(sql, sub.accountId, sub.subAccountId, month);
  const total = { requests: 0, units: 0, input_tokens: 0, output_tokens: 0, nanos: 0n };
  const lines = rows.map((row) => {
    const nanos = BigInt(row.price_nanos);
    const line = {
      requests: Number(row.requests),
      units: Number(row.units),
      input_tokens: Number(row.input_tokens),
      output_tokens: Number(row.output_tokens),
    };
    total.requests += line.requests;
    total.units += line.units;
    total.input_tokens += line.input_tokens;
    total.output_tokens += line.output_tokens;
    total.nanos += nanos;
    return { date: row.day, model: row.model, ...line, ...money(nanos) };
  });
  const { nanos, ...counts } = total;
  return {
    object: 'sub_account.statement',
    sub_account_id: sub.subAccountId,
    name: sub.name,
    external_ref: sub.externalRef,
    month,
    currency: 'usd',
    lines,
    total: { ...counts, ...money(nanos) },
  };
}

function money(nanos: bigint): Pick<Figures, 'cost_cents' | 'cost_nanos'> {
  return { cost_cents: nanosToCents(nanos), cost_nanos: nanos.toString() };
}

const COLUMNS = [
  'date',
  'model',
  'requests',
  'units',
  'input_tokens',
  'output_tokens',
  'cost_nanos',
  'cost_usd',
];

/** The statement as CSV: a line per day and model, then the total (`date` = `total`). */
export function statementCsv(statement: Statement): string {
  const row = (date: string, model: string, f: Figures): CsvCell[] => [
    date,
    model,
    csvNumber(f.requests),
    csvNumber(f.units),
    csvNumber(f.input_tokens),
    csvNumber(f.output_tokens),
    csvNumber(f.cost_nanos),
    csvNumber(dollars(BigInt(f.cost_nanos))),
  ];
  return toCsv([
    COLUMNS,
    ...statement.lines.map((line) => row(line.date, line.model, line)),
    row('total', '', statement.total),
  ]);
}
