import type { NewEvent } from '../events/envelope.ts';
import { DuplicateEventIdError, type EventStore, WrongExpectedRevisionError } from '../events/store.ts';

export interface Decider<State, Command, Event> {
  initialState(): State;
  evolve(state: State, event: Event): State;
  decide(command: Command, state: State): Event[];
  /** Turns a stored event back into the decider's event; undefined to skip it. */
  parse(stored: { type: string; data: unknown; metadata: NewEvent['metadata'] }): Event | undefined;
  /** Wraps a decided event for the store (id and metadata), given the command that decided it. */
  serialize(event: Event, command: Command, stream: string): NewEvent;
}

export interface Decision<State, Event> {
  events: Event[];
  state: State;
  /** The store's checkpoint of the append that carried these events; undefined when there were none. */
  checkpoint?: string;
}

interface Pending<State, Command, Event> {
  command: Command;
  resolve(decision: Decision<State, Event>): void;
  reject(error: unknown): void;
}

interface Known<State> {
  state: State;
  revision: number;
}

const MAX_ATTEMPTS = 50;
const CACHE_LIMIT = 10_000;

/**
 * The single in-process writer per stream. Commands for one stream queue up; each turn takes all of them,
 * decides them in order against one state, and appends their events in one append at the revision it knows.
 * A command the decider refuses fails alone. Another process's append surfaces as a revision conflict: the
 * stream is read again and the turn re-decided. States of recent streams are kept, so a turn reads nothing
 * unless another writer got in between.
 */
export class StreamWriter<State, Command, Event> {
  private readonly queues = new Map<string, Pending<State, Command, Event>[]>();
  private readonly busy = new Set<string>();
  private readonly known = new Map<string, Known<State>>();

  constructor(
    private readonly store: EventStore,
    private readonly decider: Decider<State, Command, Event>,
  ) {}

  submit(stream: string, command: Command): Promise<Decision<State, Event>> {
    return new Promise((resolve, reject) => {
      const queue = this.queues.get(stream) ?? [];
      queue.push({ command, resolve, reject });
      this.queues.set(stream, queue);
      if (!this.busy.has(stream)) void this.turn(stream);
    });
  }

  private async turn(stream: string): Promise<void> {
    this.busy.add(stream);
    try {
      for (;;) {
        const batch = this.queues.get(stream) ?? [];
        this.queues.delete(stream);
        if (batch.length === 0) return;
        try {
          await this.decideAndAppend(stream, batch);
        } catch (error) {
          for (const pending of batch) pending.reject(error);
        }
      }
    } finally {
      this.busy.delete(stream);
    }
  }

  private async decideAndAppend(stream: string, batch: Pending<State, Command, Event>[]): Promise<void> {
    let reloadedForDuplicate = false;
    for (let attempt = 1; ; attempt++) {
      const start = this.known.get(stream) ?? (await this.load(stream));
      let state = start.state;
      const events: { event: Event; command: Command }[] = [];
      const outcomes: ({ ok: true; decision: Decision<State, Event> } | { ok: false; error: unknown })[] = [];
      for (const pending of batch) {
        try {
          const decided = this.decider.decide(pending.command, state);
          state = decided.reduce(this.decider.evolve, state);
          events.push(...decided.map((event) => ({ event, command: pending.command })));
          outcomes.push({ ok: true, decision: { events: decided, state } });
        } catch (error) {
          outcomes.push({ ok: false, error });
        }
      }
      let checkpoint: string | undefined;
      try {
        if (events.length > 0) {
          const expected = start.revision < 0 ? 'no_stream' : start.revision;
          const result = await this.store.append(
            stream,
            events.map(({ event, command }) => this.decider.serialize(event, command, stream)),
            expected,
          );
          this.remember(stream, { state, revision: result.nextRevision });
          checkpoint = result.checkpoint;
        }
      } catch (error) {
        this.known.delete(stream);
        if (error instanceof WrongExpectedRevisionError && attempt < MAX_ATTEMPTS) continue;
        // Another process may have appended the same once-only event (its id derives from what it is about) while
        // this writer's state was stale: decide once more on the stream as it now is. A clash that survives a
        // fresh state is a real reuse of an id.
        if (error instanceof DuplicateEventIdError && !reloadedForDuplicate) {
          reloadedForDuplicate = true;
          continue;
        }
        throw error;
      }
      batch.forEach((pending, i) => {
        const outcome = outcomes[i];
        if (outcome?.ok) {
          pending.resolve(
            outcome.decision.events.length > 0 ? { ...outcome.decision, checkpoint } : outcome.decision,
          );
        } else pending.reject(outcome?.error);
      });
      return;
    }
  }

  private async load(stream: string): Promise<Known<State>> {
    let state = this.decider.initialState();
    let revision = -1;
    for (;;) {
      const page = await this.store.readStream(stream, { fromRevision: revision + 1, maxCount: 1000 });
      for (const stored of page) {
        const event = this.decider.parse(stored);
        if (event !== undefined) state = this.decider.evolve(state, event);
        revision = stored.revision;
      }
      if (page.length < 1000) return { state, revision };
    }
  }

  private remember(stream: string, known: Known<State>): void {
    this.known.delete(stream);
    this.known.set(stream, known);
    if (this.known.size > CACHE_LIMIT) {
      const oldest = this.known.keys().next().value;
      if (oldest !== undefined) this.known.delete(oldest);
    }
  }
}
