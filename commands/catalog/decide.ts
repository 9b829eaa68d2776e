import type { z } from 'zod';
import type { CatalogEvent, CatalogModelNote, ProviderListing } from '../../events/catalog.ts';

export type ModelNote = z.infer<typeof CatalogModelNote>;
export type Listing = z.infer<typeof ProviderListing>;

/** A model of the catalog as the snapshot compares it. */
export interface SnapshotModel extends ModelNote {
  deprecated: boolean;
}

/** The last snapshot: its models (id → deprecated) and, per provider, what its list offered; undefined before one. */
export type CatalogState =
  | { models: Map<string, boolean>; listings: Map<string, { fetchedAt: string; models: Set<string> }> }
  | undefined;

export function evolveCatalog(state: CatalogState, event: CatalogEvent): CatalogState {
  const listings = event.data.listings
    ? new Map(
        event.data.listings.map((l) => [l.provider, { fetchedAt: l.fetchedAt, models: new Set(l.models) }]),
      )
    : (state?.listings ?? new Map());
  return { models: new Map(event.data.models.map((m) => [m.id, m.deprecated])), listings };
}

const note = ({ id, provider, modality, name }: SnapshotModel): ModelNote => ({
  id,
  provider,
  modality,
  name,
});

/**
 * The catalog and the providers' lists now against the last snapshot: nothing when they agree; else a new snapshot
 * naming the models added and those deprecated since.
 *
 * - The catalog: a model new to it is added (unless its provider's known list leaves it out: it cannot be called);
 *   one newly deprecated, or gone (named from the previous snapshot's id), is deprecated.
 * - A provider's list: a catalog model it newly offers is added, one it no longer offers is deprecated. A provider
 *   listed for the first time announces nothing (nor does the first snapshot: every model would be "added"), and a
 *   list fetched before the one recorded is ignored, so that an instance's older answer never undoes a newer one.
 *   A list whose models are unchanged records nothing.
 */
export function decideSnapshot(
  state: CatalogState,
  current: readonly SnapshotModel[],
  listings: readonly Listing[] = [],
): CatalogEvent[] {
  const models = current.map(({ id, deprecated }) => ({ id, deprecated }));
  if (state === undefined) {
    return [
      { type: 'CatalogSnapshotTaken', data: { models, listings: [...listings], added: [], deprecated: [] } },
    ];
  }
  const next = new Map(state.listings);
  const newlyOffered: string[] = [];
  const withdrawn: string[] = [];
  let listingsChanged = false;
  for (const listing of listings) {
    const before = state.listings.get(listing.provider);
    const offered = new Set(listing.models);
    if (before && listing.fetchedAt < before.fetchedAt) continue;
    const same =
      before && before.models.size === offered.size && [...offered].every((id) => before.models.has(id));
    if (same) continue;
    listingsChanged = true;
    next.set(listing.provider, { fetchedAt: listing.fetchedAt, models: offered });
    if (!before) continue;
    newlyOffered.push(...[...offered].filter((id) => !before.models.has(id)));
    withdrawn.push(...[...before.models].filter((id) => !offered.has(id)));
  }
  const leftOut = (m: SnapshotModel) => next.get(m.provider)?.models.has(m.id) === false;
  const byId = new Map(current.map((m) => [m.id, m]));

  const added = current.filter((m) => !state.models.has(m.id) && !leftOut(m)).map(note);
  const deprecated = current.filter((m) => m.deprecated && state.models.get(m.id) === false).map(note);
  for (const [id, wasDeprecated] of state.models) {
    if (byId.has(id) || wasDeprecated) continue;
    const slash = id.indexOf('/');
    deprecated.push({ id, provider: id.slice(0, slash), modality: 'unknown', name: id.slice(slash + 1) });
  }
  const named = new Set([...added, ...deprecated].map((m) => m.id));
  for (const [ids, into] of [
    [newlyOffered, added],
    [withdrawn, deprecated],
  ] as const) {
    for (const id of ids) {
      const model = byId.get(id);
      // A deprecated model's offer or withdrawal is no news: its deprecation was announced.
      if (!model || model.deprecated || named.has(id)) continue;
      named.add(id);
      into.push(note(model));
    }
  }
  const catalogChanged =
    added.length > 0 ||
    deprecated.length > 0 ||
    state.models.size !== current.length ||
    current.some((m) => state.models.get(m.id) !== m.deprecated);
  if (!catalogChanged && !listingsChanged) return [];
  const recorded = [...next].map(([provider, l]) => ({
    provider,
    fetchedAt: l.fetchedAt,
    models: [...l.models],
  }));
  return [{ type: 'CatalogSnapshotTaken', data: { models, listings: recorded, added, deprecated } }];
}
