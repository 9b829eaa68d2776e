import { setTimeout as delay } from 'node:timers/promises';
import type pg from 'pg';
import { dueBatches } from '../../projections/batches/index.ts';
import { AdvisoryLockSession } from '../db/lock-session.ts';
import { FairShare } from './fair-share.ts';

/**
 * Batches one gateway works at once that may run lines here. Each holds its lock and an open read of its input
 * file while it waits for line slots, so they are bounded; an account with none of them gets one by asking
 * another account's newest to make room (`roomFor`).
 */
export const BATCHES_AT_ONCE = 16;

/** A batch this instance is working, under its lock. */
export interface BatchTurn {
  accountId: string;
  /** Whether it may run lines here (this instance has not run its take yet): it counts against BATCHES_AT_ONCE. */
  runsLines: boolean;
  /** Activation order: the newest is the one asked to make room. */
  order: number;
  /** Aborted to ask the batch to stop taking lines and let its lock go (its lines in flight are recorded first). */
  room: AbortController;
}

export interface BatchSchedulerOptions {
  pool: pg.Pool;
  /** How often it looks for due batches. */
  intervalMs: number;
  /** Line slots of this gateway, shared by every batch it works. */
  concurrency: number;
  log: (line: string) => void;
  /** Whether this instance has run the batch's take already (later passes only move its upstream batches on). */
  taken: (batchId: string) => boolean;
  /** Works the batch once, under its lock; the next pass calls it again while the batch is due. */
  work: (batchId: string, turn: BatchTurn) => Promise<void>;
}

/**
 * Which batches this instance works, and when. Each pass takes the due batches it is not working yet, in turns
 * between accounts (`dueBatches`), and works each in the background under its PostgreSQL advisory lock (all on
 * one connection): several batches at once, their lines sharing the gateway's slots (`share`) in turns between
 * accounts, so a small batch does not wait behind another tenant's large one.
 */
export class BatchScheduler {
  /** The gateway's line slots: a batch takes one per line it runs here. */
  readonly share: FairShare;
  private readonly controller = new AbortController();
  private loop: Promise<void> | undefined;
  private readonly active = new Map<string, BatchTurn>();
  private readonly working = new Set<Promise<void>>();
  private activations = 0;
  /** Every batch lock of this instance, on one connection however many batches it works. */
  private readonly locks: AdvisoryLockSession;

  constructor(private readonly options: BatchSchedulerOptions) {
    this.share = new FairShare(options.concurrency);
    this.locks = new AdvisoryLockSession(options.pool, (message, error) =>
      options.log(error === undefined ? message : `${message}: ${String(error)}`),
    );
  }

  start(): void {
    this.loop = this.run();
  }

  /** Takes no more batches; resolves once every batch being worked has returned. */
  async stop(): Promise<void> {
    this.controller.abort();
    // Batches waiting for a line slot stop waiting.
    for (const turn of this.active.values()) turn.room.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    const signal = this.controller.signal;
    while (!signal.aborted) {
      // Resolves early when stopped: the abort is the loop's end, not an error.
      await delay(this.options.intervalMs, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) break;
      try {
        await this.pass(signal);
      } catch (error) {
        this.options.log(`batch worker failed: ${String(error)}`);
      }
    }
    await Promise.all(this.working);
  }

  /**
   * Starts work on the due batches this instance is not working yet. One that will run lines here counts
   * against BATCHES_AT_ONCE; one only moving its upstream batches on, or finishing, takes a moment and does not.
   */
  private async pass(signal: AbortSignal): Promise<void> {
    // Batches waiting on an upstream batch stay due for hours; enough are taken that new ones still start.
    for (const { batchId, accountId, status } of await dueBatches(this.options.pool, 500)) {
      if (signal.aborted) return;
      if (this.active.has(batchId)) continue;
      const runsLines = !this.options.taken(batchId) && status !== 'finalizing' && status !== 'cancelling';
      let room: BatchTurn | undefined;
      if (runsLines && this.runningLines().length >= BATCHES_AT_ONCE) {
        room = this.roomFor(accountId);
        if (!room) continue;
      }
      // The lock goes with the session: after a lost connection the next pass takes the batch again from its
      // recorded lines.
      const lock = `batch.${batchId}`;
      if (!(await this.locks.tryLock(lock))) continue;
      if (signal.aborted) return this.locks.unlock(lock);
      room?.room.abort();
      const turn = { accountId, runsLines, order: ++this.activations, room: new AbortController() };
      this.active.set(batchId, turn);
      const working: Promise<void> = this.options
        .work(batchId, turn)
        .catch((error) => this.options.log(`batch ${batchId} failed: ${String(error)}`))
        .finally(async () => {
          await this.locks.unlock(lock);
          this.active.delete(batchId);
          this.working.delete(working);
        });
      this.working.add(working);
    }
  }

  private runningLines(): BatchTurn[] {
    return [...this.active.values()].filter((turn) => turn.runsLines);
  }

  /**
   * For an account with due batches and none worked here while BATCHES_AT_ONCE are: the newest batch of the
   * account working the most (at least two), to be asked to let go after its lines in flight. It is taken up
   * again later from its recorded lines, as after a restart. One at a time, so that one waiting account does
   * not empty several; none when every account has just one (more accounts than BATCHES_AT_ONCE wait their turn).
   */
  private roomFor(accountId: string): BatchTurn | undefined {
    const running = this.runningLines();
    if (running.some((turn) => turn.accountId === accountId || turn.room.signal.aborted)) return undefined;
    const counts = new Map<string, number>();
    for (const turn of running) counts.set(turn.accountId, (counts.get(turn.accountId) ?? 0) + 1);
    const [busiest, most] = [...counts].reduce((a, b) => (b[1] > a[1] ? b : a), ['', 0]);
    if (most < 2) return undefined;
    return running.filter((turn) => turn.accountId === busiest).reduce((a, b) => (b.order > a.order ? b : a));
  }
}
