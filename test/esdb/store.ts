export interface ProposedEvent {
  id: string;
  type: string;
  contentType: string;
  data: Uint8Array;
  metadata: Uint8Array;
}

export interface StoredEvent extends ProposedEvent {
  streamId: string;
  revision: bigint;
  /** Used as both commit and prepare position. */
  position: bigint;
  /** .NET ticks (100ns) since the Unix epoch, which is how ESDB encodes `created`. */
  created: bigint;
}

export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | bigint;

export type AppendOutcome =
  | { ok: true; revision: bigint | undefined; position: bigint | undefined }
  | { ok: false; current: bigint | undefined };

// A real node writes system records first, so user events never sit at 0 and positions are byte
// offsets with gaps; mimicking that keeps callers from relying on dense or zero-based positions.
const FIRST_POSITION = 1024n;
const RECORD_OVERHEAD = 128n;

export class EventLog {
  readonly all: StoredEvent[] = [];
  readonly #streams = new Map<string, StoredEvent[]>();
  readonly #listeners = new Set<() => void>();
  #nextPosition = FIRST_POSITION;

  stream(name: string): readonly StoredEvent[] | undefined {
    return this.#streams.get(name);
  }

  append(streamId: string, expected: ExpectedRevision, proposed: readonly ProposedEvent[]): AppendOutcome {
    const events = this.#streams.get(streamId) ?? [];
    const current = events.length === 0 ? undefined : BigInt(events.length - 1);
    const rejected: AppendOutcome = { ok: false, current };

    if (expected === 'any' || expected === 'stream_exists') {
      if (expected === 'stream_exists' && events.length === 0) return rejected;
      const first = proposed[0];
      const at = first ? events.findIndex((e) => e.id === first.id) : -1;
      // Like ESDB, a batch that only partially matches stored ids is a conflict, not a retry.
      if (at >= 0) return replayed(events, at, proposed) ?? rejected;
      return this.#write(streamId, events, proposed);
    }

    const expectedIndex = expected === 'no_stream' ? -1 : Number(expected);
    if (expectedIndex === events.length - 1) return this.#write(streamId, events, proposed);
    if (expectedIndex < events.length - 1 && proposed.length > 0) {
      return replayed(events, expectedIndex + 1, proposed) ?? rejected;
    }
    return rejected;
  }

  /** Resolves on the next append, or as soon as `signal` aborts. */
  nextAppend(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const done = (): void => {
        this.#listeners.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.#listeners.add(done);
      signal.addEventListener('abort', done);
    });
  }

  #write(streamId: string, events: StoredEvent[], proposed: readonly ProposedEvent[]): AppendOutcome {
    if (proposed.length === 0) {
      const last = events.at(-1);
      return { ok: true, revision: last?.revision, position: undefined };
    }
    const created = BigInt(Date.now()) * 10_000n;
    for (const event of proposed) {
      const stored: StoredEvent = {
        ...event,
        streamId,
        revision: BigInt(events.length),
        position: this.#nextPosition,
        created,
      };
      this.#nextPosition += RECORD_OVERHEAD + BigInt(event.data.length + event.metadata.length);
      events.push(stored);
      this.all.push(stored);
    }
    this.#streams.set(streamId, events);
    for (const listener of [...this.#listeners]) listener();
    const last = events.at(-1);
    return { ok: true, revision: last?.revision, position: last?.position };
  }
}

function replayed(
  events: readonly StoredEvent[],
  from: number,
  proposed: readonly ProposedEvent[],
): AppendOutcome | undefined {
  const slice = events.slice(from, from + proposed.length);
  if (slice.length !== proposed.length || slice.some((e, i) => e.id !== proposed[i]?.id)) return undefined;
  const last = slice.at(-1);
  return { ok: true, revision: last?.revision, position: last?.position };
}
