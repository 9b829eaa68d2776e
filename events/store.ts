import type { NewEvent, StoredEvent } from './envelope.ts';

/** `any`, `no_stream`, `stream_exists`, or the revision of the stream's last event (first event = 0). */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | number;

/** The checkpoint before the first event of the log. */
export const START = '';

export interface AppendResult {
  /** Revision of the last event of the stream after the append. */
  nextRevision: number;
  /** Global checkpoint of the last event appended (or found, for an idempotent retry). */
  checkpoint: string;
  position: bigint;
  /**
   * True when every event was found already stored (an idempotent retry, or another writer's identical append):
   * this call wrote nothing. Adapters that cannot tell leave it unset.
   */
  existing?: boolean;
}

export interface ReadStreamOptions {
  fromRevision?: number;
  maxCount?: number;
}

export interface ReadAllOptions {
  maxCount?: number;
}

/**
 * The event-store port. Every adapter honours the same semantics:
 * - revisions start at 0 and every expected-revision form is enforced;
 * - re-appending events whose ids are already stored (the same batch, retried) succeeds and stores nothing;
 * - `readAll` and `subscribe` deliver every committed event once, in one global order, never skipping an event
 *   that commits after a later-positioned one.
 */
export interface EventStore {
  readonly kind: 'postgres' | 'esdb';
  append(stream: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult>;
  readStream(stream: string, options?: ReadStreamOptions): Promise<StoredEvent[]>;
  /** Events after `from` (exclusive), in global order, up to `maxCount`. */
  readAll(from: string, options?: ReadAllOptions): Promise<StoredEvent[]>;
  /** Catch up from `from` (exclusive), then follow live appends until `signal` aborts. */
  subscribe(from: string, signal: AbortSignal): AsyncIterable<StoredEvent>;
  /** Compares two checkpoints of this store: negative, zero or positive. */
  compareCheckpoints(a: string, b: string): number;
  /** Finishes pending appends, then releases connections. */
  close(): Promise<void>;
}

export class WrongExpectedRevisionError extends Error {
  override readonly name = 'WrongExpectedRevisionError';
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    /** The stream's last revision, or -1 when it has no events. */
    readonly actual: number,
  ) {
    super(
      `stream ${stream}: expected revision ${String(expected)}, actual ${actual < 0 ? 'no stream' : actual}`,
    );
  }
}

/** An event id that is already stored, but not as part of the same batch on the same stream. */
export class DuplicateEventIdError extends Error {
  override readonly name = 'DuplicateEventIdError';
  constructor(
    readonly stream: string,
    readonly eventId: string,
  ) {
    super(`event ${eventId} is already stored elsewhere; cannot append it to ${stream}`);
  }
}

/**
 * The store refused what an event holds (PostgreSQL: a data exception, such as a NUL character), not the
 * append's place in the stream: another append without that event can succeed.
 */
export class UnstorableEventError extends Error {
  override readonly name = 'UnstorableEventError';
  constructor(
    readonly stream: string,
    readonly reason: string,
  ) {
    super(`the event store refused an event for ${stream}: ${reason}`);
  }
}

/**
 * The store cannot be reached right now (a cluster without a leader, a node that went away): the operation may be
 * retried once it is back, so the HTTP layer answers 503 with Retry-After rather than 500.
 */
export class StoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`the event store is unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.name = 'StoreUnavailableError';
  }
}

export function satisfiesExpected(expected: ExpectedRevision, actual: number): boolean {
  switch (expected) {
    case 'any':
      return true;
    case 'no_stream':
      return actual < 0;
    case 'stream_exists':
      return actual >= 0;
    default:
      return expected === actual;
  }
}
