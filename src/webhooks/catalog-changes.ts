import { CatalogCommands } from '../../commands/catalog/handler.ts';
import type { EventStore } from '../../events/store.ts';
import type { Catalog } from '../catalog/types.ts';
import type { OfferedModels } from '../providers/offered-models.ts';

/**
 * Records the catalog and what each configured provider's model list offers of it, when either differs from the
 * last snapshot, as a snapshot event; the webhook read model turns its added and deprecated models into
 * `model.added` and `model.deprecated` for every account with an endpoint. Called at start and after every round
 * of the model-list poller that changed a list. Instances deciding together do so one after the other on the same
 * stream, so a change is recorded (and announced) once.
 */
export class CatalogChanges {
  private readonly commands: CatalogCommands;

  constructor(
    store: EventStore,
    private readonly catalog: Catalog,
    private readonly offered: OfferedModels,
  ) {
    this.commands = new CatalogCommands(store);
  }

  async record(now: Date): Promise<{ added: number; deprecated: number } | undefined> {
    const all = this.catalog.all();
    const current = all.map((model) => ({
      id: model.id,
      provider: model.provider,
      modality: model.modality,
      name: model.name,
      deprecated: model.deprecated,
    }));
    const listings = this.offered.known().map(({ provider, fetchedAt }) => ({
      provider,
      fetchedAt: fetchedAt.toISOString(),
      models: all.filter((m) => m.provider === provider && this.offered.offer(m) === true).map((m) => m.id),
    }));
    const decision = await this.commands.snapshot(current, listings, now);
    const event = decision.events[0];
    if (!event) return undefined;
    return { added: event.data.added.length, deprecated: event.data.deprecated.length };
  }
}
