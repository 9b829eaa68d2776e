import type { EventStore } from '../../events/store.ts';
import type { Sql } from '../../projections/types.ts';

/**
 * Resolves once the projection `name` has committed `checkpoint` (or a later one), as its row in
 * `projection_checkpoints` says: whichever instance holds the projections' lease, a read that follows a write
 * through this sees the write. Gives up quietly after `timeoutMs` (the caller answers from the event it wrote).
 */
export async function projectedUpTo(
  sql: Sql,
  store: EventStore,
  name: string,
  checkpoint: string,
  timeoutMs = 5000,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (let wait = 5; ; wait = Math.min(wait * 2, 50)) {
    const { rows } = await sql.query<{ checkpoint: string }>(
      'SELECT checkpoint FROM projection_checkpoints WHERE name = $1',
      [name],
    );
    const at = rows[0]?.checkpoint;
    if (at !== undefined && at !== '' && store.compareCheckpoints(at, checkpoint) >= 0) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}
