import { randomUUID } from 'node:crypto';
import type { EventStore } from '../../events/store.ts';
import type { Sql } from '../../projections/types.ts';
import type { LiveAccounts } from './live-state.ts';

/**
 * How far each running instance's live state has read the log. A key's revocation or rotation, and a sub-account's
 * change (its cap, price book, allowed models), answers only once every instance has applied it, so that the next
 * request, on whichever instance, is decided by it: each instance reports its position as soon as it applies an
 * account or sub-account event (and every few seconds besides, as a sign of life), and the instance that appended
 * waits here for every instance heard from lately to reach the event.
 */
const DDL = `CREATE TABLE IF NOT EXISTS live_positions (
  instance_id text PRIMARY KEY,
  checkpoint text NOT NULL,
  reported_at timestamptz NOT NULL
)`;

const REPORT_EVERY_MS = 2_000;
/** An instance silent for longer is taken to be gone (stopped, crashed, cut off) and is not waited for. */
const GONE_AFTER = '10 seconds';
const UNDEFINED_TABLE = '42P01';

export class InstancePositions {
  private readonly instanceId = randomUUID();
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private reporting: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly sql: Sql,
    private readonly live: LiveAccounts,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  async start(): Promise<void> {
    await this.sql.query(DDL);
    await this.report();
    this.unsubscribe = this.live.onAccountsChanged(() => void this.report());
    this.timer = setInterval(() => void this.report(), REPORT_EVERY_MS);
    this.timer.unref();
  }

  /** One report at a time; a request for another while one is in flight sends one more after it, with the latest. */
  private report(): Promise<void> {
    if (this.reporting) {
      this.again = true;
      return this.reporting;
    }
    this.reporting = (async () => {
      do {
        this.again = false;
        if (this.stopped) return;
        await this.sql
          .query(
            `INSERT INTO live_positions (instance_id, checkpoint, reported_at) VALUES ($1, $2, now())
             ON CONFLICT (instance_id) DO UPDATE SET checkpoint = excluded.checkpoint, reported_at = now()`,
            [this.instanceId, this.live.position()],
          )
          .catch(this.onError);
      } while (this.again);
    })().finally(() => {
      this.reporting = undefined;
    });
    return this.reporting;
  }

  /** Stops reporting and leaves the table, so that no one waits for an instance that is gone. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.unsubscribe?.();
    await this.reporting;
    await this.sql
      .query('DELETE FROM live_positions WHERE instance_id = $1', [this.instanceId])
      .catch(this.onError);
  }
}

/**
 * Resolves true once every instance heard from in the last 10 s has read the log up to `checkpoint` (at once when no
 * instance reports: the CLI on a store no gateway runs on), or false when `timeoutMs` passes first.
 */
export async function allInstancesReached(
  sql: Sql,
  store: EventStore,
  checkpoint: string,
  timeoutMs = 5_000,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await sql
      .query<{ checkpoint: string }>(
        `SELECT checkpoint FROM live_positions WHERE reported_at > now() - interval '${GONE_AFTER}'`,
      )
      .then(
        (result) => result.rows,
        (error: { code?: string }) => {
          if (error.code === UNDEFINED_TABLE) return [];
          throw error;
        },
      );
    if (rows.every((row) => store.compareCheckpoints(row.checkpoint, checkpoint) >= 0)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
