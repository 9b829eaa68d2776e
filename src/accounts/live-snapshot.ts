import type pg from 'pg';
import type { EventStore } from '../../events/store.ts';
import type { LiveAccount, LiveKey, LiveSubAccount } from './live-state.ts';

/**
 * The live state as it stood after one event, so that a start replays only the log's tail instead of the
 * whole log (docs/operations.md, start-up time). A snapshot is a cache: the log stays the truth, and a snapshot
 * that does not match the log or this code's fold is ignored and the log replayed in full.
 */
export interface LiveSnapshot {
  /** The checkpoint of the last event folded, and that event (to check the log still holds it). */
  checkpoint: string;
  last: { stream: string; revision: number; id: string };
  accounts: LiveAccount[];
  subAccounts: LiveSubAccount[];
  /** Every key known by id; `revoked` ones are out of the hash index. */
  keys: (LiveKey & { revoked: boolean })[];
}

/**
 * Raised whenever the live state's fold or shape changes (src/accounts/live-state.ts): a snapshot of another
 * version is ignored.
 */
export const LIVE_SNAPSHOT_VERSION = 7;

export interface LiveSnapshots {
  load(): Promise<LiveSnapshot | undefined>;
  save(snapshot: LiveSnapshot): Promise<void>;
}

const DDL = `CREATE TABLE IF NOT EXISTS live_state_snapshot (
  slot integer PRIMARY KEY,
  version integer NOT NULL,
  checkpoint text NOT NULL,
  taken_at timestamptz NOT NULL,
  state text NOT NULL
)`;

/** Bigints, Dates and Maps written so that JSON.parse gives them back. */
function replacer(this: unknown, key: string, value: unknown): unknown {
  const raw = (this as Record<string, unknown>)[key];
  if (typeof value === 'bigint') return { $n: value.toString() };
  if (raw instanceof Date) return { $d: raw.toISOString() };
  if (value instanceof Map) return { $m: [...value.entries()] };
  return value;
}

function reviver(_key: string, value: unknown): unknown {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const tagged = value as { $n?: string; $d?: string; $m?: [unknown, unknown][] };
    if (typeof tagged.$n === 'string') return BigInt(tagged.$n);
    if (typeof tagged.$d === 'string') return new Date(tagged.$d);
    if (Array.isArray(tagged.$m)) return new Map(tagged.$m);
  }
  return value;
}

export const encodeSnapshot = (snapshot: LiveSnapshot): string => JSON.stringify(snapshot, replacer);
export const decodeSnapshot = (text: string): LiveSnapshot => JSON.parse(text, reviver) as LiveSnapshot;

/**
 * Snapshots in the read models' PostgreSQL, one row (the latest taken by any instance: each is a valid starting
 * point, a later one only shortens the replay). The log is checked for the snapshot's last event before it is
 * used: a log restored from an older backup than the read models would otherwise start from events it lost.
 */
export function postgresLiveSnapshots(
  pool: pg.Pool,
  store: EventStore,
  log: (line: string) => void,
): LiveSnapshots {
  let ready: Promise<unknown> | undefined;
  const table = () => {
    ready ??= pool.query(DDL).catch((error: { code?: string }) => {
      // Two instances creating it at once: the loser sees a unique violation; the table exists.
      if (error.code !== '23505' && error.code !== '42P07') throw error;
    });
    return ready;
  };
  return {
    async load() {
      await table();
      const { rows } = await pool.query<{ version: number; state: string }>(
        'SELECT version, state FROM live_state_snapshot WHERE slot = 1',
      );
      const row = rows[0];
      if (!row) return undefined;
      if (row.version !== LIVE_SNAPSHOT_VERSION) {
        log(
          `live state snapshot of version ${row.version} ignored (this gateway's is ${LIVE_SNAPSHOT_VERSION})`,
        );
        return undefined;
      }
      const snapshot = decodeSnapshot(row.state);
      const [event] = await store.readStream(snapshot.last.stream, {
        fromRevision: snapshot.last.revision,
        maxCount: 1,
      });
      if (event?.id !== snapshot.last.id || event.checkpoint !== snapshot.checkpoint) {
        log(
          'live state snapshot ignored: the log does not hold its last event (restored from an older backup?)',
        );
        return undefined;
      }
      return snapshot;
    },
    async save(snapshot) {
      await table();
      await pool.query(
        `INSERT INTO live_state_snapshot (slot, version, checkpoint, taken_at, state) VALUES (1, $1, $2, now(), $3)
         ON CONFLICT (slot) DO UPDATE SET version = EXCLUDED.version, checkpoint = EXCLUDED.checkpoint,
           taken_at = EXCLUDED.taken_at, state = EXCLUDED.state`,
        [LIVE_SNAPSHOT_VERSION, snapshot.checkpoint, encodeSnapshot(snapshot)],
      );
    },
  };
}
