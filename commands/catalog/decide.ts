import type { z } from 'zod';
import type { CatalogEvent, CatalogModelNote } from '../../events/catalog.ts';

export type ModelNote = z.infer<typeof CatalogModelNote>;

/** A model of the catalog as the snapshot compares it. */
export interface SnapshotModel extends ModelNote {
  deprecated: boolean;
}

/** The last snapshot's models (id → deprecated), or undefined before the first. */
export type CatalogState = Map<string, boolean> | undefined;

export function evolveCatalog(_state: CatalogState, event: CatalogEvent): CatalogState {
  return new Map(event.data.models.map((m) => [m.id, m.deprecated]));
}

/**
 * The catalog at this start against the last snapshot: nothing when they agree; else a new snapshot naming the
 * models added and those deprecated since. A model that left the catalog counts as deprecated (it can no longer
 * be called), named from the previous snapshot's id. The first snapshot announces nothing: every model would be
 * "added".
 */
export function decideSnapshot(state: CatalogState, current: readonly SnapshotModel[]): CatalogEvent[] {
  const models = current.map(({ id, deprecated }) => ({ id, deprecated }));
  if (state === undefined)
    return [{ type: 'CatalogSnapshotTaken', data: { models, added: [], deprecated: [] } }];
  const note = ({ id, provider, modality, name }: SnapshotModel): ModelNote => ({
    id,
    provider,
    modality,
    name,
  });
  const added = current.filter((m) => !state.has(m.id)).map(note);
  const deprecated = current.filter((m) => m.deprecated && state.get(m.id) === false).map(note);
  const present = new Set(current.map((m) => m.id));
  for (const [id, wasDeprecated] of state) {
    if (present.has(id) || wasDeprecated) continue;
    const slash = id.indexOf('/');
    deprecated.push({ id, provider: id.slice(0, slash), modality: 'unknown', name: id.slice(slash + 1) });
  }
  const changed =
    added.length > 0 ||
    deprecated.length > 0 ||
    state.size !== current.length ||
    current.some((m) => state.get(m.id) !== m.deprecated);
  return changed ? [{ type: 'CatalogSnapshotTaken', data: { models, added, deprecated } }] : [];
}
