import pg from 'pg';
import type { StoredEvent } from '../../events/envelope.ts';
import type { EventStore } from '../../events/store.ts';
import { liveTables, type Projection } from '../../projections/types.ts';
import { applyEvents } from './apply.ts';
import { BatchedSql } from './batched-sql.ts';
import { chunks } from './chunks.ts';

const { escapeLiteral } = pg;

const MAX_BATCH = 500;
/** The pause after a run that was not full, so that runs under load grow (bounds the added read-model lag). */
const RUN_PACE_MS = 25;
const LEASE_RETRY_MS = 2000;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

export interface RunnerOptions {
  pool: pg.Pool;
  store: EventStore;
  projections: readonly Projection[];
  onError?: (projection: string, error: unknown) => void;
}

/**
 * Feeds each projection from its checkpoint. Each run of events is folded into the tables and the checkpoint is
 * advanced in one transaction, which first locks the checkpoint row: if the stored checkpoint is not the one
 * this runner holds (a rebuild swapped tables in, or another instance moved on), it rolls back and resumes from
 * the stored one. An event is therefore applied exactly once per table.
 */
export class ProjectionRunner {
  private readonly controller = new AbortController();
  private readonly loops: Promise<void>[] = [];
  private readonly listeners = new Set<() => void>();
  private readonly positions = new Map<string, string>();

  constructor(private readonly options: RunnerOptions) {}

  /**
   * Runs the projections while this instance holds the lease (a session advisory lock), so that of several
   * instances one projects and the others stand by. Correctness does not rest on the lease: the checkpoint lock
   * already makes a second runner's work roll back.
   */
  start(): void {
    this.loops.push(this.holdLease());
  }

  private async holdLease(): Promise<void> {
    const signal = this.controller.signal;
    while (!signal.aborted) {
      let client: pg.PoolClient | undefined;
      try {
        client = await this.options.pool.connect();
        // The lease goes with its connection: when the database goes away, stop projecting at once and take the
        // lease again once it is back (the lock is gone with the session, so another instance may have it).
        const lost = new AbortController();
        client.on('error', () => lost.abort());
        const { rows } = await client.query<{ held: boolean }>(
          `SELECT pg_try_advisory_lock(hashtext(current_schema() || '.projections')) AS held`,
        );
        if (rows[0]?.held) await this.runWhileConnected(client, lost.signal);
      } catch (error) {
        if (!signal.aborted) this.options.onError?.('lease', error);
      } finally {
        // Destroying the connection frees the session lock with it.
        client?.release(true);
      }
      if (!signal.aborted) await sleep(LEASE_RETRY_MS, signal);
    }
  }

  private async runWhileConnected(lease: pg.PoolClient, lost: AbortSignal): Promise<void> {
    const leased = new AbortController();
    const stopAll = () => leased.abort();
    this.controller.signal.addEventListener('abort', stopAll, { once: true });
    lost.addEventListener('abort', stopAll, { once: true });
    const loops = [this.run(leased.signal)];
    try {
      while (!leased.signal.aborted) {
        await sleep(LEASE_RETRY_MS, leased.signal);
        if (!leased.signal.aborted) await lease.query('SELECT 1');
      }
    } finally {
      leased.abort();
      this.controller.signal.removeEventListener('abort', stopAll);
      lost.removeEventListener('abort', stopAll);
      await Promise.allSettled(loops);
    }
  }

  /** The checkpoint each projection has committed, as last seen by this runner. */
  checkpoint(name: string): string | undefined {
    return this.positions.get(name);
  }

  /** Resolves once every projection has committed a checkpoint at or after `checkpoint`. */
  async caughtUpTo(checkpoint: string, timeoutMs = 10_000): Promise<void> {
    const reached = () =>
      this.options.projections.every((p) => {
        const at = this.positions.get(p.name);
        return at !== undefined && this.options.store.compareCheckpoints(at, checkpoint) >= 0;
      });
    const deadline = Date.now() + timeoutMs;
    while (!reached()) {
      if (Date.now() > deadline)
        throw new Error(`projections did not reach ${checkpoint} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const done = () => {
          this.listeners.delete(done);
          resolve();
        };
        this.listeners.add(done);
        setTimeout(done, 50);
      });
    }
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await Promise.allSettled(this.loops);
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.follow(signal);
      } catch (error) {
        if (signal.aborted) return;
        this.options.onError?.('projections', error);
        await sleep(500, signal);
      }
    }
  }

  /**
   * One subscription from the earliest checkpoint feeds every projection, and each run of events is folded into
   * all of them in one transaction: one read of the log and one commit per run, however many read models.
   */
  private async follow(signal: AbortSignal): Promise<void> {
    const { pool, store, projections } = this.options;
    const held = new Map<string, string>();
    for (const projection of projections)
      held.set(projection.name, await storedCheckpoint(pool, projection.name));
    for (const [name, checkpoint] of held) this.advance(name, checkpoint);
    const from = [...held.values()].reduce((a, b) => (store.compareCheckpoints(a, b) <= 0 ? a : b));
    const local = new AbortController();
    const stop = () => local.abort();
    signal.addEventListener('abort', stop, { once: true });
    try {
      for await (const run of chunks(store.subscribe(from, local.signal), MAX_BATCH)) {
        const committed = await commitAll(pool, store, projections, held, run);
        if (!committed) return; // a checkpoint moved under us (a rebuild): start again from the stored ones
        for (const [name, checkpoint] of committed) {
          held.set(name, checkpoint);
          this.advance(name, checkpoint);
        }
        // Under load, let the next run gather for a moment: a run's fixed cost (its transaction, a checkpoint per
        // read model) is then shared by more events. After a quiet spell the first event is folded at once.
        if (run.length < MAX_BATCH) await sleep(RUN_PACE_MS, signal);
      }
    } finally {
      local.abort();
      signal.removeEventListener('abort', stop);
    }
  }

  private advance(name: string, checkpoint: string): void {
    this.positions.set(name, checkpoint);
    for (const listener of [...this.listeners]) listener();
  }
}

/**
 * Folds `run` into every projection and advances their checkpoints in one transaction, provided each stored
 * checkpoint is still the one held; returns the new checkpoints, or undefined (changing nothing) when one moved.
 * Events a projection has already folded (it is ahead, after a rebuild) are skipped for it.
 */
async function commitAll(
  pool: pg.Pool,
  store: EventStore,
  projections: readonly Projection[],
  held: ReadonlyMap<string, string>,
  run: readonly StoredEvent[],
): Promise<Map<string, string> | undefined> {
  const client = await pool.connect();
  try {
    // Read models are rebuilt from the log: a crash may lose their last commits (the checkpoints go with them,
    // so the events are folded again), and they need not wait for the disk on every run.
    // One round trip: the projections' names are the gateway's own, written in as literals.
    const names = projections.map((p) => escapeLiteral(p.name)).join(', ');
    const results = (await client.query(
      `BEGIN; SET LOCAL synchronous_commit = off;
       SELECT name, checkpoint FROM projection_checkpoints WHERE name IN (${names}) ORDER BY name FOR UPDATE`,
    )) as unknown as pg.QueryResult<{ name: string; checkpoint: string }>[];
    const rows = results[results.length - 1]?.rows ?? [];
    const stored = new Map(rows.map((r) => [r.name, r.checkpoint]));
    if (projections.some((p) => stored.get(p.name) !== held.get(p.name))) {
      await client.query('ROLLBACK');
      return undefined;
    }
    const next = new Map<string, string>();
    const advanced: string[] = [];
    const sql = new BatchedSql(client);
    for (const projection of projections) {
      const from = held.get(projection.name) ?? '';
      const fresh = run.filter((event) => store.compareCheckpoints(event.checkpoint, from) > 0);
      const last = fresh[fresh.length - 1];
      if (!last) continue;
      await applyEvents(sql, projection, liveTables(projection), fresh);
      advanced.push(projection.name, last.checkpoint, last.position.toString());
      next.set(projection.name, last.checkpoint);
    }
    // Every checkpoint in one statement: a run carrying a few events would otherwise spend most of its
    // statements on them.
    if (advanced.length > 0) {
      const rowsOf = Array.from(
        { length: advanced.length / 3 },
        (_, i) => `($${3 * i + 1}, $${3 * i + 2}, $${3 * i + 3})`,
      );
      await sql.query(
        `UPDATE projection_checkpoints AS p
           SET checkpoint = v.checkpoint, position = v.position::bigint, updated_at = now()
           FROM (VALUES ${rowsOf.join(', ')}) AS v (name, checkpoint, position)
          WHERE p.name = v.name`,
        advanced,
      );
    }
    await sql.flush('COMMIT');
    return next;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/**
 * Folds `run` and advances the checkpoint in one transaction, provided the stored checkpoint is still `held`;
 * returns false (changing nothing) when it has moved.
 */
export async function commitRun(
  pool: pg.Pool,
  projection: Projection,
  tables: Record<string, string>,
  held: string,
  run: readonly StoredEvent[],
): Promise<boolean> {
  const last = run[run.length - 1];
  if (!last) return true;
  const client = await pool.connect();
  try {
    // Read models are rebuilt from the log: a crash may lose their last commits (the checkpoint goes with them,
    // so the events are folded again), and they need not wait for the disk on every run.
    await client.query('BEGIN; SET LOCAL synchronous_commit = off');
    const { rows } = await client.query<{ checkpoint: string }>(
      'SELECT checkpoint FROM projection_checkpoints WHERE name = $1 FOR UPDATE',
      [projection.name],
    );
    if (rows[0]?.checkpoint !== held) {
      await client.query('ROLLBACK');
      return false;
    }
    const sql = new BatchedSql(client);
    await applyEvents(sql, projection, tables, run);
    await sql.query(
      'UPDATE projection_checkpoints SET checkpoint = $2, position = $3, updated_at = now() WHERE name = $1',
      [projection.name, last.checkpoint, last.position.toString()],
    );
    await sql.flush('COMMIT');
    return true;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** Brings every projection up to the end of the log once, without following it (the CLI without a server). */
export async function catchUp(
  pool: pg.Pool,
  store: EventStore,
  projections: readonly Projection[],
): Promise<void> {
  for (const projection of projections) {
    const tables = liveTables(projection);
    let held = await storedCheckpoint(pool, projection.name);
    for (;;) {
      const run = await store.readAll(held, { maxCount: MAX_BATCH });
      if (run.length === 0) break;
      if (await commitRun(pool, projection, tables, held, run)) {
        held = run[run.length - 1]?.checkpoint ?? held;
      } else {
        held = await storedCheckpoint(pool, projection.name);
      }
    }
  }
}

export async function storedCheckpoint(pool: pg.Pool | pg.PoolClient, name: string): Promise<string> {
  const { rows } = await pool.query<{ checkpoint: string }>(
    'SELECT checkpoint FROM projection_checkpoints WHERE name = $1',
    [name],
  );
  return rows[0]?.checkpoint ?? '';
}
