import pg from 'pg';
import { Subject } from 'rxjs';
import type { NewEvent, StoredEvent } from '../../../events/envelope.ts';
import type {
  AppendResult,
  EventStore,
  ExpectedRevision,
  ReadAllOptions,
  ReadStreamOptions,
} from '../../../events/store.ts';
import { compareCheckpoints, EVENT_COLUMNS, type EventRow, fromRow, parseCheckpoint } from './rows.ts';
import { migrateEventStore } from './schema.ts';
import { SharedTail } from './tail.ts';
import { type AppendOutcome, type AppendRequest, appendError, writeBatch } from './write-batch.ts';

interface QueuedAppend extends AppendRequest {
  resolve(result: AppendResult): void;
  reject(error: Error): void;
}

export interface PostgresEventStoreOptions {
  pool: pg.Pool;
  /** Config for the LISTEN connection that wakes live subscribers. */
  listenConfig: pg.ClientConfig;
  /** Schema the tables live in; also names the notification channel. */
  schema: string;
  /** Appends gathered while one transaction is in flight go into the next one, up to this many. */
  maxBatch?: number;
  /** Subscribers re-read at least this often, to pick up events held back by a slow older transaction. */
  pollIntervalMs?: number;
}

const PAGE_SIZE = 500;
/** The pause before opening a lost LISTEN connection again. */
const RELISTEN_MS = 500;

export class PostgresEventStore implements EventStore {
  readonly kind = 'postgres' as const;
  private readonly pool: pg.Pool;
  private readonly channel: string;
  private readonly maxBatch: number;
  private readonly pollIntervalMs: number;
  private queue: QueuedAppend[] = [];
  private flushing: Promise<void> | undefined;
  private readonly wakeups = new Subject<void>();
  private listener: pg.Client | undefined;
  private listening: Promise<void> | undefined;
  private tail: SharedTail | undefined;
  private relisten: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(private readonly options: PostgresEventStoreOptions) {
    this.pool = options.pool;
    this.channel = `gw_events_${options.schema}`;
    this.maxBatch = options.maxBatch ?? 1000;
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
  }

  static async open(options: PostgresEventStoreOptions): Promise<PostgresEventStore> {
    await migrateEventStore(options.pool);
    return new PostgresEventStore(options);
  }

  append(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new Error('event store is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ stream, events, expected, resolve, reject });
      this.startFlush();
    });
  }

  private startFlush(): void {
    if (this.flushing) return;
    this.flushing = this.flush().finally(() => {
      this.flushing = undefined;
      // An append queued while the last batch was settling would otherwise wait for the next append.
      if (this.queue.length > 0) this.startFlush();
    });
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        settle(batch, await this.writeInTransaction(batch));
      } catch (error) {
        if (batch.length === 1) {
          const request = batch[0] as QueuedAppend;
          request.reject(appendError(request, error));
          continue;
        }
        // One bad request (an id reused across streams, say) must not fail the others: write each alone.
        for (const request of batch) {
          try {
            settle([request], await this.writeInTransaction([request]));
          } catch (single) {
            request.reject(appendError(request, single));
          }
        }
      }
    }
  }

  private writeInTransaction(batch: readonly AppendRequest[]): Promise<AppendOutcome[]> {
    // One statement outside any transaction block: it is its own transaction, committed (durably) before the
    // answer comes back, so the batch costs one round trip. A statement that fails stores nothing.
    return writeBatch(this.pool, batch, new Date(), this.channel);
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    const { rows } = await this.pool.query<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE stream = $1 AND revision >= $2 ORDER BY revision LIMIT $3`,
      [stream, options.fromRevision ?? 0, options.maxCount ?? null],
    );
    return rows.map(fromRow);
  }

  async readAll(from: string, options: ReadAllOptions = {}): Promise<StoredEvent[]> {
    const [transactionId, position] = parseCheckpoint(from);
    // Only transactions older than every one still running are final, so rows below that horizon can never
    // be joined by a late commit with a smaller (transaction_id, position).
    const { rows } = await this.pool.query<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM events
       WHERE (transaction_id, position) > ($1::xid8, $2::bigint)
         AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
       ORDER BY transaction_id, position LIMIT $3`,
      [transactionId, position, options.maxCount ?? PAGE_SIZE],
    );
    return rows.map(fromRow);
  }

  async *subscribe(from: string, signal: AbortSignal): AsyncIterable<StoredEvent> {
    await this.listen();
    let checkpoint = from;
    const own = async function* (store: PostgresEventStore) {
      for (;;) {
        const page = await store.readAll(checkpoint);
        for (const event of page) {
          if (signal.aborted) return;
          yield event;
          checkpoint = event.checkpoint;
        }
        if (page.length < PAGE_SIZE) return;
      }
    };
    // Catch up alone, then join the shared tail and read once more to close any gap between the two; what the
    // tail also delivers is skipped by checkpoint.
    yield* own(this);
    const queue: StoredEvent[] = [];
    let wake: (() => void) | undefined;
    this.tail ??= new SharedTail(
      {
        readAll: (position) => this.readAll(position),
        compare: compareCheckpoints,
        wakeups: this.wakeups,
        pollIntervalMs: this.pollIntervalMs,
        pageSize: PAGE_SIZE,
      },
      checkpoint,
    );
    const stop = this.tail.listen((events) => {
      queue.push(...events);
      wake?.();
    }, checkpoint);
    const onAbort = () => wake?.();
    signal.addEventListener('abort', onAbort);
    try {
      yield* own(this);
      while (!signal.aborted) {
        if (queue.length === 0) {
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          wake = undefined;
          continue;
        }
        for (const event of queue.splice(0)) {
          if (signal.aborted) return;
          if (compareCheckpoints(event.checkpoint, checkpoint) <= 0) continue;
          yield event;
          checkpoint = event.checkpoint;
        }
      }
    } finally {
      stop();
      signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * The LISTEN connection only hastens subscribers (the tail polls anyway), so it never fails a subscription:
   * when it cannot be opened or is lost (the database restarting), it is opened again in the background.
   */
  private listen(): Promise<void> {
    this.listening ??= this.openListener().catch(() => {
      this.listening = undefined;
      this.listenAgainSoon();
    });
    return this.listening;
  }

  private async openListener(): Promise<void> {
    const client = new pg.Client(this.options.listenConfig);
    client.on('notification', () => {
      this.wakeups.next();
    });
    client.on('error', () => {
      // Errors while connecting reject `connect` instead; this is a live connection lost.
      if (this.listener !== client) return;
      this.listener = undefined;
      this.listening = undefined;
      client.end().catch(() => undefined);
      this.listenAgainSoon();
    });
    try {
      await client.connect();
      await client.query(`LISTEN "${this.channel}"`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
    // Appends notified while nobody listened would otherwise wait for the next poll.
    this.wakeups.next();
  }

  private listenAgainSoon(): void {
    if (this.closed || this.relisten) return;
    this.relisten = setTimeout(() => {
      this.relisten = undefined;
      if (!this.closed) void this.listen();
    }, RELISTEN_MS);
  }

  compareCheckpoints(a: string, b: string): number {
    return compareCheckpoints(a, b);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.relisten);
    while (this.flushing) await this.flushing;
    this.wakeups.complete();
    await this.listener?.end().catch(() => undefined);
  }
}

function settle(batch: readonly QueuedAppend[], outcomes: readonly AppendOutcome[]): void {
  batch.forEach((request, i) => {
    const outcome = outcomes[i] as AppendOutcome;
    if (outcome.ok) request.resolve(outcome.result);
    else request.reject(outcome.error);
  });
}
