import pg from 'pg';
import type { Sql } from '../../projections/types.ts';

type Result = { rows: Record<string, unknown>[]; rowCount: number | null };

/**
 * The projections' writes of one run, sent together: each statement is kept with its parameters written in as
 * quoted literals (which PostgreSQL types from their context, as it does untyped parameters), and the lot goes
 * in one round trip when the run commits. Folding a run was one round trip per statement, several per event;
 * on this kind of machine the system calls alone cost more than the statements.
 *
 * A read (a statement that is not an INSERT, UPDATE or DELETE) sends what is pending first and runs at once, as
 * does a statement with a value that has no plain literal form. A buffered write answers no rows and a null
 * rowCount: a projection must not branch on a write's result (each does its conditional work in one statement).
 */
export class BatchedSql implements Sql {
  private pending: string[] = [];
  constructor(private readonly client: pg.ClientBase) {}

  async query<Row extends Record<string, unknown> = Record<string, unknown>>(
    text: string,
    values: unknown[] = [],
  ): Promise<{ rows: Row[]; rowCount: number | null }> {
    const inlined = isWrite(text) ? inline(text, values) : undefined;
    if (inlined === undefined) {
      await this.flush();
      return (await this.client.query<Row>(text, values)) as { rows: Row[]; rowCount: number | null };
    }
    this.pending.push(inlined);
    return { rows: [], rowCount: null } as Result as { rows: Row[]; rowCount: number | null };
  }

  /** Sends what is pending, followed by `then` (a COMMIT, say) in the same round trip. */
  async flush(then?: string): Promise<void> {
    const statements = then ? [...this.pending, then] : this.pending;
    this.pending = [];
    if (statements.length > 0) await this.client.query(statements.join(';\n'));
  }
}

const WRITE = /^\s*(INSERT|UPDATE|DELETE|WITH)\b/i;

function isWrite(text: string): boolean {
  if (!WRITE.test(text)) return false;
  if (!/^\s*WITH\b/i.test(text)) return true;
  // A WITH counts when its main statement (outside every parenthesis) writes; a WITH ... SELECT is a read.
  let outer = text;
  for (let previous = ''; previous !== outer; ) {
    previous = outer;
    outer = outer.replace(/\([^()]*\)/g, '()');
  }
  return /\b(INSERT|UPDATE|DELETE)\b/i.test(outer);
}

function inline(text: string, values: readonly unknown[]): string | undefined {
  const literals: string[] = [];
  for (const value of values) {
    const literal = literalOf(value);
    if (literal === undefined) return undefined;
    literals.push(literal);
  }
  let missing = false;
  const out = text.replace(/\$(\d+)/g, (_, n: string) => {
    const literal = literals[Number(n) - 1];
    if (literal === undefined) missing = true;
    return literal ?? '';
  });
  return missing ? undefined : out;
}

function literalOf(value: unknown): string | undefined {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return pg.escapeLiteral(value);
  if (typeof value === 'bigint') return `'${value}'`;
  if (typeof value === 'number') return Number.isFinite(value) ? `'${value}'` : undefined;
  if (typeof value === 'boolean') return value ? "'true'" : "'false'";
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : `'${value.toISOString()}'`;
  return undefined;
}
