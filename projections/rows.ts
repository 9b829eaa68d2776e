import type { Folded } from './types.ts';

/**
 * At most this many rows per statement: PostgreSQL takes at most 65,535 parameters in one, and the widest row a
 * projection sends in a VALUES list has fewer than 40 columns. A run of the live runner (500 events) or a rebuild's
 * page (1,000) fits in one.
 */
const ROWS_PER_STATEMENT = 1000;

/**
 * Rows as a VALUES list of parameters, each cast to its column's type (a parameter in a VALUES list is otherwise
 * text), numbered from `$1`.
 */
export function valuesList(
  rows: readonly (readonly unknown[])[],
  types: readonly string[],
): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const text = rows
    .map((row) => `(${row.map((value, i) => `$${values.push(value)}::${types[i]}`).join(', ')})`)
    .join(',\n');
  return { text, values };
}

/** The items in slices of at most ROWS_PER_STATEMENT, in order. */
export function* slices<T>(items: readonly T[]): Iterable<readonly T[]> {
  for (let i = 0; i < items.length; i += ROWS_PER_STATEMENT) yield items.slice(i, i + ROWS_PER_STATEMENT);
}

/**
 * The items whose stored event was not seen before in the run, for a projection that guards its counters by the
 * stored event's id (to which a stored event stands for at most one event it handles): folding one twice changes
 * nothing, so a run folds each once, and its statements never meet one row twice.
 */
export function firstOfEach(items: readonly Folded[]): Folded[] {
  const seen = new Set<string>();
  return items.filter(({ stored }) => !seen.has(stored.id) && seen.add(stored.id));
}

/** A charge of the balance: what the money read models count. */
export function isCharge(item: Folded): boolean {
  return item.event.type === 'SpendSettled' || item.event.type === 'SpendOverrun';
}
