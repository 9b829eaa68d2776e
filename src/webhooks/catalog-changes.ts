import { CatalogCommands } from '../../commands/catalog/handler.ts';
import type { EventStore } from '../../events/store.ts';
import type { Catalog } from '../catalog/types.ts';

/**
 * Compares the catalog this start built with the last one recorded, and records the difference (if any) as a
 * snapshot event; the webhook read model turns its added and deprecated models into `model.added` and
 * `model.deprecated` for every account with an endpoint. Instances starting together decide one after the other
 * on the same stream, so a change is recorded once.
 */
export async function recordCatalogChanges(
  store: EventStore,
  catalog: Catalog,
  now: Date,
): Promise<{ added: number; deprecated: number } | undefined> {
  const current = catalog.all().map((model) => ({
    id: model.id,
    provider: model.provider,
    modality: model.modality,
    name: model.name,
    deprecated: model.deprecated,
  }));
  const decision = await new CatalogCommands(store).snapshot(current, now);
  const event = decision.events[0];
  if (!event) return undefined;
  return { added: event.data.added.length, deprecated: event.data.deprecated.length };
}
