import type { StoredEvent } from '../../events/envelope.ts';
import { parseEvent } from '../../events/index.ts';
import type { Projection, Sql } from '../../projections/types.ts';

/** Folds a run of events into the projection's tables (inside the caller's transaction). */
export async function applyEvents(
  sql: Sql,
  projection: Projection,
  tables: Record<string, string>,
  events: readonly StoredEvent[],
): Promise<void> {
  for (const stored of events) {
    if (!(projection.canHandle as readonly string[]).includes(stored.type)) continue;
    const parsed = parseEvent(stored);
    // An event that fails its schema is the audit's business; a read model skips it rather than stall forever.
    if (!parsed.ok) continue;
    await projection.evolve(sql, tables, parsed.event, stored);
  }
}
