import type { StoredEvent } from '../../events/envelope.ts';
import type { GatewayEvent } from '../../events/index.ts';
import { parseEvent } from '../../events/index.ts';
import { compositeTypes, logicalEvents } from '../../events/logical.ts';
import type { Folded, Projection, Sql } from '../../projections/types.ts';

/**
 * The logical events of each stored event, kept while the stored event is: a run is folded into every projection
 * (and the audit folds it into every shadow), and each stored event is parsed and expanded once for all of them.
 */
const expanded = new WeakMap<StoredEvent, readonly GatewayEvent[]>();

function logicalOf(stored: StoredEvent): readonly GatewayEvent[] {
  let events = expanded.get(stored);
  if (events === undefined) {
    const parsed = parseEvent(stored);
    // An event that fails its schema is the audit's business; a read model skips it rather than stall forever.
    events = parsed.ok ? logicalEvents(parsed.event) : [];
    expanded.set(stored, events);
  }
  return events;
}

/**
 * Folds a run of events into the projection's tables (inside the caller's transaction): the logical events it
 * handles, in order, each with the stored event it came from; all at once where the projection folds runs.
 */
export async function applyEvents(
  sql: Sql,
  projection: Projection,
  tables: Record<string, string>,
  events: readonly StoredEvent[],
): Promise<void> {
  const handles = projection.canHandle as readonly string[];
  const items: Folded[] = [];
  for (const stored of events) {
    if (!handles.includes(stored.type) && !compositeTypes.has(stored.type)) continue;
    for (const event of logicalOf(stored)) if (handles.includes(event.type)) items.push({ event, stored });
  }
  if (items.length === 0) return;
  if (projection.evolveRun) return projection.evolveRun(sql, tables, items);
  for (const { event, stored } of items) await projection.evolve(sql, tables, event, stored);
}
