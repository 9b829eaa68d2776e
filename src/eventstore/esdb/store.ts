import {
  BACKWARDS,
  DeadlineExceededError,
  END,
  EventStoreDBClient,
  excludeSystemEvents,
  FORWARDS,
  jsonEvent,
  NO_STREAM,
  NotLeaderError,
  type START,
  StreamNotFoundError,
  UnavailableError,
  WrongExpectedVersionError,
} from '@eventstore/db-client';
import { chainHash, GENESIS_HASH, type NewEvent, type StoredEvent } from '../../../events/envelope.ts';
import {
  type AppendResult,
  DuplicateEventIdError,
  type EventStore,
  type ExpectedRevision,
  type ReadAllOptions,
  type ReadStreamOptions,
  StoreUnavailableError,
  satisfiesExpected,
  WrongExpectedRevisionError,
} from '../../../events/store.ts';
import {
  compareCheckpoints,
  encodeMetadata,
  fromResolved,
  isGatewayEvent,
  toCheckpoint,
  toPosition,
} from './codec.ts';

/** How far back an `any` / `stream_exists` retry is searched for its own events. */
const RETRY_WINDOW = 1000;
const MAX_ATTEMPTS = 50;

/** gRPC's UNAVAILABLE, DEADLINE_EXCEEDED and a follower's refusal all pass once the cluster is whole again. */
function passing(error: unknown): unknown {
  const passes =
    error instanceof UnavailableError ||
    error instanceof DeadlineExceededError ||
    error instanceof NotLeaderError;
  return passes ? new StoreUnavailableError(error) : error;
}

async function unlessUnavailable<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw passing(error);
  }
}

/**
 * EventStoreDB adapter. EventStoreDB enforces the expected revision itself; the adapter always appends with the
 * exact revision it read (so the hash chain cannot fork) and checks the caller's expectation against that same
 * revision, which gives `any` and `stream_exists` the same meaning as on PostgreSQL.
 */
export class EsdbEventStore implements EventStore {
  readonly kind = 'esdb' as const;
  private readonly pending = new Set<Promise<unknown>>();

  constructor(private readonly client: EventStoreDBClient) {}

  static connect(url: string): EsdbEventStore {
    return new EsdbEventStore(EventStoreDBClient.connectionString(url));
  }

  append(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const work = unlessUnavailable(this.appendWithRetry(stream, events, expected));
    this.pending.add(work);
    return work.finally(() => this.pending.delete(work));
  }

  private async appendWithRetry(
    stream: string,
    events: readonly NewEvent[],
    expected: ExpectedRevision,
  ): Promise<AppendResult> {
    for (let attempt = 0; ; attempt++) {
      const tail = await this.tail(stream);
      const retry = await this.findRetry(stream, events, expected, tail?.revision ?? -1);
      if (retry) return retry;
      const actual = tail?.revision ?? -1;
      if (!satisfiesExpected(expected, actual))
        throw new WrongExpectedRevisionError(stream, expected, actual);
      if (events.length === 0) return { nextRevision: actual, checkpoint: '', position: 0n };
      const now = new Date();
      let prevHash = tail?.hash ?? GENESIS_HASH;
      const encoded = events.map((event, i) => {
        const occurredAt = event.occurredAt ?? now;
        const hash = chainHash(prevHash, { ...event, stream, revision: actual + 1 + i, occurredAt });
        const metadata = encodeMetadata(event.metadata, {
          occurredAt: occurredAt.toISOString(),
          prevHash,
          hash,
        });
        prevHash = hash;
        return jsonEvent({ id: event.id, type: event.type, data: event.data as never, metadata });
      });
      try {
        const result = await this.client.appendToStream(stream, encoded, {
          expectedRevision: actual < 0 ? NO_STREAM : BigInt(actual),
        });
        const position = result.position ?? { commit: 0n, prepare: 0n };
        return {
          nextRevision: Number(result.nextExpectedRevision),
          checkpoint: toCheckpoint(position),
          position: position.commit,
        };
      } catch (error) {
        // Another writer got in between the read and the append: read again and re-decide.
        if (!(error instanceof WrongExpectedVersionError) || attempt >= MAX_ATTEMPTS) throw error;
      }
    }
  }

  private async tail(stream: string): Promise<StoredEvent | undefined> {
    const events = await this.read(stream, { fromRevision: END, direction: BACKWARDS, maxCount: 1 });
    return events[0];
  }

  /** Finds this batch already stored (a retried append), reporting it as the original success. */
  private async findRetry(
    stream: string,
    events: readonly NewEvent[],
    expected: ExpectedRevision,
    actual: number,
  ): Promise<AppendResult | undefined> {
    const first = events[0];
    if (!first || actual < 0) return undefined;
    let candidates: StoredEvent[];
    if (typeof expected === 'number' || expected === 'no_stream') {
      const from = expected === 'no_stream' ? 0 : expected + 1;
      if (from > actual) return undefined;
      candidates = await this.read(stream, {
        fromRevision: BigInt(from),
        direction: FORWARDS,
        maxCount: events.length,
      });
    } else {
      const recent = await this.read(stream, {
        fromRevision: END,
        direction: BACKWARDS,
        maxCount: RETRY_WINDOW,
      });
      const start = recent.find((e) => e.id === first.id);
      if (!start) return undefined;
      candidates = await this.read(stream, {
        fromRevision: BigInt(start.revision),
        direction: FORWARDS,
        maxCount: events.length,
      });
    }
    if (candidates[0]?.id !== first.id) return undefined;
    const matches = events.every((event, i) => candidates[i]?.id === event.id);
    if (!matches) throw new DuplicateEventIdError(stream, first.id);
    const last = candidates[candidates.length - 1] as StoredEvent;
    return { nextRevision: last.revision, checkpoint: last.checkpoint, position: last.position };
  }

  private async read(
    stream: string,
    options: {
      fromRevision: bigint | typeof START | typeof END;
      direction: typeof FORWARDS | typeof BACKWARDS;
      maxCount: number;
    },
  ): Promise<StoredEvent[]> {
    const events: StoredEvent[] = [];
    try {
      for await (const resolved of this.client.readStream(stream, options)) {
        if (resolved.event) events.push(fromResolved(resolved));
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return events;
  }

  readStream(stream: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    return unlessUnavailable(
      this.read(stream, {
        fromRevision: BigInt(options.fromRevision ?? 0),
        direction: FORWARDS,
        maxCount: options.maxCount ?? Number.MAX_SAFE_INTEGER,
      }),
    );
  }

  readAll(from: string, options: ReadAllOptions = {}): Promise<StoredEvent[]> {
    return unlessUnavailable(this.readAllPages(from, options));
  }

  private async readAllPages(from: string, options: ReadAllOptions): Promise<StoredEvent[]> {
    const maxCount = options.maxCount ?? 500;
    const events: StoredEvent[] = [];
    let position = from;
    // $all also holds system events, which are skipped: read on until the page is full or the log ends.
    for (;;) {
      let read = 0;
      let last = position;
      // A forward read of $all includes the event at its starting position; the port's reads are exclusive.
      for await (const resolved of this.client.readAll({
        fromPosition: toPosition(position),
        direction: FORWARDS,
        maxCount: maxCount + 1,
      })) {
        read += 1;
        if (resolved.event?.position) last = toCheckpoint(resolved.event.position);
        if (!isGatewayEvent(resolved)) continue;
        const event = fromResolved(resolved);
        if (compareCheckpoints(event.checkpoint, from) <= 0) continue;
        events.push(event);
        if (events.length === maxCount) return events;
      }
      if (read <= maxCount || last === position) return events;
      position = last;
    }
  }

  async *subscribe(from: string, signal: AbortSignal): AsyncIterable<StoredEvent> {
    const subscription = this.client.subscribeToAll({
      fromPosition: toPosition(from),
      filter: excludeSystemEvents(),
    });
    const stop = () => void subscription.unsubscribe();
    signal.addEventListener('abort', stop, { once: true });
    try {
      for await (const resolved of subscription) {
        if (signal.aborted) return;
        if (!isGatewayEvent(resolved)) continue;
        const event = fromResolved(resolved);
        if (compareCheckpoints(event.checkpoint, from) <= 0) continue;
        yield event;
      }
    } finally {
      signal.removeEventListener('abort', stop);
      await subscription.unsubscribe().catch(() => undefined);
    }
  }

  compareCheckpoints(a: string, b: string): number {
    return compareCheckpoints(a, b);
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.pending]);
    await this.client.dispose();
  }
}
