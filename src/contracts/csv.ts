/**
 * The one CSV writer of the project (the CLI's `export`, the dashboard's `usage.csv`, sub-account statements): RFC
 * 4180 fields, and no cell a spreadsheet would run as a formula (CSV injection, as OWASP describes it). A column is
 * text or a number by what it holds, never by how a value looks: a client's tag `-1+HYPERLINK(...)` looks like a
 * negative number and is a formula.
 */

/** A numeric column's value (an amount, a count), written as the number it is: a refund's `-500` stays a number. */
export interface CsvNumber {
  readonly number: string;
}

/** A cell: text (any value a client may have chosen) or a number. */
export type CsvCell = string | CsvNumber;

const NUMBER = /^-?\d+(?:\.\d+)?$/;

/** A number for a numeric column; anything else is a programming error, never a cell let through unescaped. */
export function csvNumber(value: number | bigint | string): CsvNumber {
  const text = String(value);
  if (!NUMBER.test(text)) throw new TypeError(`not a number for a CSV column: ${text.slice(0, 40)}`);
  return { number: text };
}

/** What makes a spreadsheet read a cell as a formula (OWASP's list): =, +, -, @, a tab or a carriage return first. */
const FORMULA_LEAD = /^[=+\-@\t\r]/;

/**
 * One CSV field. Text that starts like a formula gets a leading `'`, which spreadsheets show and never evaluate; then
 * a field holding a quote, a comma, a semicolon (the separator of spreadsheets in many locales), a tab or a line break
 * is quoted, with quotes doubled, so that no separator inside a value can start a cell of its own.
 */
export function csvField(cell: CsvCell): string {
  const text = typeof cell === 'string' ? (FORMULA_LEAD.test(cell) ? `'${cell}` : cell) : cell.number;
  return /[",;\t\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Rows as CSV text, CRLF after every row as RFC 4180 has it. */
export function toCsv(rows: readonly (readonly CsvCell[])[]): string {
  return rows.map((row) => `${row.map(csvField).join(',')}\r\n`).join('');
}
