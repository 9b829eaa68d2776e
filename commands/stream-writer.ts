import type { NewEvent } from '../events/envelope.ts';
import { findUnstorableText, unstorableCharacter } from '../events/storable.ts';
import {
  DuplicateEventIdError,
  type EventStore,
  UnstorableEventError,
  WrongExpectedRevisionError,
} from '../events/store.ts';
import { DomainError } from './errors.ts';

export interface Decider<State, Command, Event> {
  initialState(): State;
  evolve(state: State, event: Event): State;
  decide(command: Command, state: State): Event[];
  /** Turns a stored event back into the decider's event; undefined to skip it. */
  parse(stored: { type: string; data: unknown; metadata: NewEvent['metadata'] }): Event | undefined;
  /** Wraps a decided event for the store (id and metadata), given the command that decided it. */
  serialize(event: Event, command: Command, stream: string): NewEvent;
  /**
   * Whether a decision is a refusal that appends nothing (a hold that does not fit): decided on a remembered
   * state, it is confirmed against the stream's newest events first, since another process may have made room.
   */
  refusesQuietly?(command: Command, events: readonly Event[]): boolean;
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
 * A command the decider refuses fails alone, and so does one whose events hold text no store can keep (a NUL,
 * an unpaired surrogate: refused as `invalid`, naming the field, before anything is appended). Should the store
 * still refuse an event's content, the group is split and retried so that only the command carrying it fails.
 * Another process's append surfaces as a revision conflict: the stream is read again and the turn re-decided.
 * States of recent streams are kept, so a turn reads nothing unless another writer got in between.
 */
export class StreamWriter<State, Command, Event> {
  private readonly queues = new Map<string, Pending<State, Command, Event>[]>();
  private readonly busy = new Set<string>();
  private readonly known = new Map<string, Known<State>>();
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly store: EventStore,
    private readonly decider: Decider<State, Command, Event>,
  ) {}

  /**
   * Queues a command for the stream's next append. With `lazyMs`, the command starts no append of its own: it
   * rides in the next one another command starts, or in one started after `lazyMs` if none comes (write-behind
   * for work nobody waits on). It is still decided in order with the commands around it.
   */
  submit(
    stream: string,
    command: Command,
    options: { lazyMs?: number } = {},
  ): Promise<Decision<State, Event>> {
    const what = unstorableCharacter(stream);
    if (what !== undefined) return Promise.reject(new DomainError('invalid', `the id holds ${what}`));
    return new Promise((resolve, reject) => {
      const queue = this.queues.get(stream) ?? [];
      queue.push({ command, resolve, reject });
      this.queues.set(stream, queue);
      if (this.busy.has(stream)) return;
      if (options.lazyMs === undefined) void this.turn(stream);
      else this.later(stream, options.lazyMs);
    });
  }

  private later(stream: string, ms: number): void {
    if (this.timers.has(stream)) return;
    const timer = setTimeout(() => {
      this.timers.delete(stream);
      if (!this.busy.has(stream)) void this.turn(stream);
    }, ms);
    timer.unref();
    this.timers.set(stream, timer);
  }

  private async turn(stream: string): Promise<void> {
    this.busy.add(stream);
    const timer = this.timers.get(stream);
    if (timer) {
      clearTimeout(timer);
      this.timers.delete(stream);
    }
    try {
      for (;;) {
        const batch = this.queues.get(stream) ?? [];
        this.queues.delete(stream);
        if (batch.length === 0) return;
        await this.settle(stream, batch);
      }
    } finally {
      this.busy.delete(stream);
    }
  }

  /**
   * Appends a group in one append. When the store refuses an event's content the group is halved and each half
   * tried on its own (in order), so one offender among n costs about 2·log2(n) appends and fails alone.
   */
  private async settle(stream: string, group: Pending<State, Command, Event>[]): Promise<void> {
    try {
      await this.decideAndAppend(stream, group);
    } catch (error) {
      if (error instanceof UnstorableEventError && group.length > 1) {
        const half = Math.ceil(group.length / 2);
        await this.settle(stream, group.slice(0, half));
        await this.settle(stream, group.slice(half));
        return;
      }
      for (const pending of group) pending.reject(error);
    }
  }

  private async decideAndAppend(stream: string, batch: Pending<State, Command, Event>[]): Promise<void> {
    // The last clash of once-only ids, and the revision of the state it was decided on. A clash means another
    // writer stored that event first: the stream read again holds it, so the next decision does not repeat it,
    // but may reach the next once-only event (a budget's next threshold) that a third writer stores meanwhile, so
    // this batch decides again as long as the stream moves. Read again unmoved, it is a real reuse of an id.
    let clash: { revision: number; error: DuplicateEventIdError } | undefined;
    let reloadedForExisting = false;
    let reloadedForRefusal = false;
    for (let attempt = 1; ; attempt++) {
      const cached = this.known.get(stream);
      const start = cached ?? (await this.load(stream));
      if (clash && start.revision === clash.revision) throw clash.error;
      let state = start.state;
      const events: NewEvent[] = [];
      const outcomes: ({ ok: true; decision: Decision<State, Event> } | { ok: false; error: unknown })[] = [];
      for (const pending of batch) {
        try {
          const decided = this.decider.decide(pending.command, state);
          const serialized = decided.map((event) => this.decider.serialize(event, pending.command, stream));
          refuseUnstorable(serialized);
          state = decided.reduce(this.decider.evolve, state);
          events.push(...serialized);
          outcomes.push({ ok: true, decision: { events: decided, state } });
        } catch (error) {
          outcomes.push({ ok: false, error });
        }
      }
      // A refusal decided on a remembered state is confirmed on the stream as it is: another process may have
      // appended what the command needs (a cancellation whose charge it records), and a refusal appends nothing.
      if (cached && !reloadedForRefusal && outcomes.some((o) => !o.ok && o.error instanceof DomainError)) {
        this.known.delete(stream);
        reloadedForRefusal = true;
        continue;
      }
      // A quiet refusal in a turn that appends nothing would never meet a revision conflict: the remembered state
      // is brought up to the stream's head (usually nothing to read) and the turn decided again if it moved.
      // A turn that appends is checked by its expected revision instead.
      if (
        cached &&
        !reloadedForRefusal &&
        events.length === 0 &&
        batch.some((pending, i) => {
          const outcome = outcomes[i];
          return (
            outcome?.ok === true && this.decider.refusesQuietly?.(pending.command, outcome.decision.events)
          );
        })
      ) {
        reloadedForRefusal = true;
        // A state folded in place may be half caught up when a read fails: it is then forgotten.
        const caught = await this.catchUp(stream, cached).catch((error: unknown) => {
          this.known.delete(stream);
          throw error;
        });
        if (caught.revision !== cached.revision) {
          this.remember(stream, caught);
          continue;
        }
      }
      let checkpoint: string | undefined;
      try {
        if (events.length > 0) {
          const expected = start.revision < 0 ? 'no_stream' : start.revision;
          const result = await this.store.append(stream, events, expected);
          // Another writer stored these very events (once-only ids) after this one read the stream: they are not
          // this batch's doing. Decide again on the stream as it now is, as for a clash of ids below.
          if (result.existing && !reloadedForExisting) {
            this.known.delete(stream);
            reloadedForExisting = true;
            continue;
          }
          // Found stored rather than written (a second time): the stream may hold events this state was not
          // decided on, and this state may count its own events twice, so it is read again for the next batch.
          if (result.existing) this.known.delete(stream);
          else this.remember(stream, { state, revision: result.nextRevision });
          checkpoint = result.checkpoint;
        }
      } catch (error) {
        this.known.delete(stream);
        if (error instanceof WrongExpectedRevisionError && attempt < MAX_ATTEMPTS) continue;
        // Another process may have appended the same once-only event (its id derives from what it is about) while
        // this writer's state was stale: decide again on the stream as it now is.
        if (error instanceof DuplicateEventIdError && attempt < MAX_ATTEMPTS) {
          clash = { revision: start.revision, error };
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

  /** A remembered state brought up to the stream's head, from the events after it (nothing was decided on it). */
  private async catchUp(stream: string, known: Known<State>): Promise<Known<State>> {
    let { state, revision } = known;
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

/** Text in an event that no store could keep is the command's own fault: a 400 naming the field. */
function refuseUnstorable(events: readonly NewEvent[]): void {
  for (const event of events) {
    const found = findUnstorableText(event.data) ?? findUnstorableText(event.metadata, 'metadata');
    if (!found) continue;
    const field = found.path.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    throw new DomainError(
      'invalid',
      `'${field}' holds ${found.what}, which cannot be stored`,
      field === '' ? undefined : field,
    );
  }
}
