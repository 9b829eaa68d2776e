import type { StoredEvent } from '../events/envelope.ts';
import type { EventType, GatewayEvent } from '../events/index.ts';

/** The part of a database client a projection needs; a pg PoolClient fits. */
export interface Sql {
  query<Row extends Record<string, unknown> = Record<string, unknown>>(
    text: string,
    values?: unknown[],
  ): Promise<{ rows: Row[]; rowCount: number | null }>;
}

/**
 * A read model: its tables, the events it folds, and how. Table names are passed in so that a rebuild can fold
 * into fresh tables and swap them in; DDL runs once per physical table and must not name indexes or constraints
 * (PostgreSQL names them uniquely, so a swapped-in table never clashes with the next rebuild's).
 */
export interface Projection {
  name: string;
  /** Raised whenever the tables or the folding change: a gateway finding another version rebuilds it. */
  version: number;
  /** Logical table name → DDL creating it under the given physical name. */
  tables: Record<string, (table: string) => string>;
  canHandle: readonly EventType[];
  evolve(sql: Sql, tables: Record<string, string>, event: GatewayEvent, stored: StoredEvent): Promise<void>;
  /**
   * Folds a run of events (those it handles, in log order) at once, when present: a counter touched by many events
   * of the run is then written once. The tables must come out the same as folding each event on its own, for any
   * split of the log into runs, and folding an event again must change nothing.
   */
  evolveRun?(sql: Sql, tables: Record<string, string>, items: readonly Folded[]): Promise<void>;
}

/** A logical event of a run and the stored event it came from (several logical events may share one). */
export interface Folded {
  event: GatewayEvent;
  stored: StoredEvent;
}

/** Physical names for live tables: the logical names themselves. */
export function liveTables(projection: Projection): Record<string, string> {
  return Object.fromEntries(Object.keys(projection.tables).map((name) => [name, name]));
}
