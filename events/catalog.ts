import { z } from 'zod';

/**
 * Events of the `catalog-models` stream: what the model catalog held at each start that changed it. The catalog
 * is built from the bundled price list, so it changes when the gateway is upgraded; each start compares it with
 * the last snapshot and records the difference, which becomes `model.added` and `model.deprecated` webhooks.
 */

/** A model as its webhook names it. */
export const CatalogModelNote = z.object({
  id: z.string(),
  provider: z.string(),
  modality: z.string(),
  name: z.string(),
});

export const CatalogSnapshotTaken = z.object({
  /** Every model id of the catalog now, with whether it is deprecated: the next start's point of comparison. */
  models: z.array(z.object({ id: z.string(), deprecated: z.boolean() })),
  /** Models not in the previous snapshot; empty for the first snapshot, which announces nothing. */
  added: z.array(CatalogModelNote),
  /** Models deprecated since the previous snapshot (newly listed as deprecated, or no longer listed). */
  deprecated: z.array(CatalogModelNote),
});

export const catalogEventSchemas = { CatalogSnapshotTaken } as const;

export type CatalogEvent = { type: 'CatalogSnapshotTaken'; data: z.infer<typeof CatalogSnapshotTaken> };

export const CATALOG_STREAM = 'catalog-models';
