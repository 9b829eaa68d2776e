import { z } from 'zod';

/**
 * Events of the `catalog-models` stream: what the model catalog held, and which of its models each configured
 * provider's own model list offered, whenever either changed. The catalog is built from the bundled price list, so
 * it changes when the gateway is upgraded; the providers' lists are asked at start and on a schedule. Each change is
 * recorded against the last snapshot, and its difference becomes `model.added` and `model.deprecated` webhooks.
 */

/** A model as its webhook names it. */
export const CatalogModelNote = z.object({
  id: z.string(),
  provider: z.string(),
  modality: z.string(),
  name: z.string(),
});

/** The catalog models one provider's list offered, as of the fetch that said so. */
export const ProviderListing = z.object({
  provider: z.string(),
  /** When the list was fetched: an older fetch (another instance's, say) never undoes a newer one. */
  fetchedAt: z.string(),
  /** Gateway ids (`openai/gpt-4o`) of the catalog models the list names. */
  models: z.array(z.string()),
});

export const CatalogSnapshotTaken = z.object({
  /** Every model id of the catalog now, with whether it is deprecated: the next start's point of comparison. */
  models: z.array(z.object({ id: z.string(), deprecated: z.boolean() })),
  /**
   * Per provider whose model list is known, what it offered: the next change's point of comparison. Absent in
   * snapshots written before the gateway asked providers (read as none known).
   */
  listings: z.array(ProviderListing).optional(),
  /**
   * Models new to the catalog (unless their provider's known list leaves them out), and models a provider's list
   * newly offers; empty for the first snapshot, which announces nothing.
   */
  added: z.array(CatalogModelNote),
  /**
   * Models deprecated since the previous snapshot: newly marked deprecated, no longer in the catalog, or no longer
   * offered by their provider's list.
   */
  deprecated: z.array(CatalogModelNote),
});

export const catalogEventSchemas = { CatalogSnapshotTaken } as const;

export type CatalogEvent = { type: 'CatalogSnapshotTaken'; data: z.infer<typeof CatalogSnapshotTaken> };

export const CATALOG_STREAM = 'catalog-models';
