import type pg from 'pg';
import type { EventStore } from '../../events/store.ts';
import type { Projection } from '../../projections/types.ts';

export interface ProjectionStatus {
  name: string;
  checkpoint: string;
  position: string;
  updated_at: string | null;
  /** Events in the log after the checkpoint; counting stops at `LAG_LIMIT`. */
  lag: number;
  lag_is_lower_bound: boolean;
}

const LAG_LIMIT = 100_000;

export async function projectionStatus(
  pool: pg.Pool,
  store: EventStore,
  projections: readonly Projection[],
): Promise<ProjectionStatus[]> {
  const { rows } = await pool.query<{ name: string; checkpoint: string; position: string; updated_at: Date }>(
    'SELECT name, checkpoint, position, updated_at FROM projection_checkpoints',
  );
  const byName = new Map(rows.map((r) => [r.name, r]));
  const statuses: ProjectionStatus[] = [];
  for (const projection of projections) {
    const row = byName.get(projection.name);
    const checkpoint = row?.checkpoint ?? '';
    let lag = 0;
    let from = checkpoint;
    while (lag < LAG_LIMIT) {
      const page = await store.readAll(from, { maxCount: 1000 });
      if (page.length === 0) break;
      lag += page.length;
      from = page[page.length - 1]?.checkpoint ?? from;
    }
    statuses.push({
      name: projection.name,
      checkpoint,
      position: row?.position ?? '0',
      updated_at: row?.updated_at?.toISOString() ?? null,
      lag,
      lag_is_lower_bound: lag >= LAG_LIMIT,
    });
  }
  return statuses;
}
