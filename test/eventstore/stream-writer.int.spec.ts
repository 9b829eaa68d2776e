import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../commands/errors.ts';
import { StreamWriter } from '../../commands/stream-writer.ts';
import type { NewEvent } from '../../events/envelope.ts';
import { deterministicEventId } from '../../events/index.ts';
import { DuplicateEventIdError, UnstorableEventError } from '../../events/store.ts';
import type { Database } from '../../src/db/database.ts';
import type { PostgresEventStore } from '../../src/eventstore/postgres/store.ts';
import { testDatabase, testStore } from '../support/database.ts';

type Event = { type: 'Added' } | { type: 'Noticed' };
interface State {
  added: number;
  noticed: boolean;
}

/** A writer as each gateway instance has its own: the second addition raises a notice, once (deterministic id). */
const writer = (store: PostgresEventStore) =>
  new StreamWriter<State, 'Add', Event>(store, {
    initialState: () => ({ added: 0, noticed: false }),
    evolve: (state, event) =>
      event.type === 'Added' ? { ...state, added: state.added + 1 } : { ...state, noticed: true },
    decide: (_command, state) =>
      state.added + 1 >= 2 && !state.noticed ? [{ type: 'Added' }, { type: 'Noticed' }] : [{ type: 'Added' }],
    parse: (stored) => ({ type: stored.type }) as Event,
    serialize: (event, _command, stream) => ({
      id: event.type === 'Noticed' ? deterministicEventId(`${stream}/noticed`) : randomUUID(),
      type: event.type,
      data: {},
      metadata: { schemaVersion: 1 },
    }),
  });

describe('stream writers of two instances over one store', () => {
  let database: Database;
  let store: PostgresEventStore;
  beforeAll(async () => {
    database = await testDatabase();
    store = await testStore(database, { pollIntervalMs: 200 });
  });
  afterAll(async () => {
    await store.close();
    await database.close();
  });

  it('decide again when the other instance already stored the same once-only event', async () => {
    const stream = `writer-${randomUUID()}`;
    const a = writer(store);
    const b = writer(store);
    await a.submit(stream, 'Add'); // a knows one addition
    await b.submit(stream, 'Add'); // b loads it, adds the second and the notice
    // a decides on its stale state: the second addition and the notice, whose id b already stored.
    const decision = await a.submit(stream, 'Add');
    expect(decision.events).toEqual([{ type: 'Added' }]);
    expect(decision.state).toEqual({ added: 3, noticed: true });
    expect((await store.readStream(stream)).map((e) => e.type)).toEqual([
      'Added',
      'Added',
      'Noticed',
      'Added',
    ]);
  });

  it('confirms a refusal decided on a remembered state against the stream, which another instance moved', async () => {
    // Settling is allowed only once something was opened; another instance opens it.
    type Opening = { type: 'Opened' } | { type: 'Settled' } | { type: 'Touched' };
    const gate = () =>
      new StreamWriter<{ open: boolean }, 'Open' | 'Settle' | 'Touch', Opening>(store, {
        initialState: () => ({ open: false }),
        evolve: (state, event) => ({ open: state.open || event.type === 'Opened' }),
        decide: (command, state) => {
          if (command === 'Open') return [{ type: 'Opened' }];
          if (command === 'Touch') return [{ type: 'Touched' }];
          if (!state.open) throw new DomainError('conflict', 'nothing is open');
          return [{ type: 'Settled' }];
        },
        parse: (stored) => ({ type: stored.type }) as Opening,
        serialize: (event) => ({
          id: randomUUID(),
          type: event.type,
          data: {},
          metadata: { schemaVersion: 1 },
        }),
      });
    const stream = `gate-${randomUUID()}`;
    const a = gate();
    const b = gate();
    await a.submit(stream, 'Touch'); // a remembers the stream: nothing open
    await b.submit(stream, 'Open');
    const settled = await a.submit(stream, 'Settle');
    expect(settled.events).toEqual([{ type: 'Settled' }]);
    expect((await store.readStream(stream)).map((e) => e.type)).toEqual(['Touched', 'Opened', 'Settled']);
    await expect(b.submit(`gate-${randomUUID()}`, 'Settle')).rejects.toThrow('nothing is open');
  });

  it('reads the stream again after events it re-decided were found stored, rather than trust its own state', async () => {
    // A payment a key, with the key's id; the decider does not look for the key in the state, so a command sent
    // twice decides the same event twice and the store finds it stored both times.
    const payments = new StreamWriter<{ paid: number }, string, { type: 'Paid' }>(store, {
      initialState: () => ({ paid: 0 }),
      evolve: (state) => ({ paid: state.paid + 1 }),
      decide: () => [{ type: 'Paid' }],
      parse: (stored) => ({ type: stored.type }) as { type: 'Paid' },
      serialize: (event, key, stream) => ({
        id: deterministicEventId(`${stream}/${key}`),
        type: event.type,
        data: {},
        metadata: { schemaVersion: 1 },
      }),
    });
    const stream = `payments-${randomUUID()}`;
    expect((await payments.submit(stream, 'first')).state).toEqual({ paid: 1 });
    await payments.submit(stream, 'first');
    expect((await payments.submit(stream, 'second')).state).toEqual({ paid: 2 });
    expect(await store.readStream(stream)).toHaveLength(2);
  });

  it('decide again as often as other instances store once-only events first, each a different one', async () => {
    // Notices at the second and at the third addition, each once (deterministic ids), as a budget's thresholds.
    type Tiered = { type: 'Added' } | { type: 'Noticed2' } | { type: 'Noticed3' };
    const tiered = (on: PostgresEventStore) =>
      new StreamWriter<{ added: number; noticed: string[] }, 'Add', Tiered>(on, {
        initialState: () => ({ added: 0, noticed: [] }),
        evolve: (state, event) =>
          event.type === 'Added'
            ? { ...state, added: state.added + 1 }
            : { ...state, noticed: [...state.noticed, event.type] },
        decide: (_command, state) => {
          const events: Tiered[] = [{ type: 'Added' }];
          for (const [at, type] of [
            [2, 'Noticed2'],
            [3, 'Noticed3'],
          ] as const)
            if (state.added + 1 >= at && !state.noticed.includes(type)) events.push({ type });
          return events;
        },
        parse: (stored) => ({ type: stored.type }) as Tiered,
        serialize: (event, _command, stream) => ({
          id: event.type === 'Added' ? randomUUID() : deterministicEventId(`${stream}/${event.type}`),
          type: event.type,
          data: {},
          metadata: { schemaVersion: 1 },
        }),
      });
    const stream = `writer-${randomUUID()}`;
    const b = tiered(store);
    const c = tiered(store);
    // a's second reload of the stream is overtaken by c, which stores the next notice before a appends again.
    let reads = 0;
    const overtaken = new Proxy(store, {
      get(target, property) {
        if (property === 'readStream')
          return async (...args: Parameters<PostgresEventStore['readStream']>) => {
            const page = await target.readStream(...args);
            if (++reads === 2) await c.submit(stream, 'Add');
            return page;
          };
        const value = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const a = tiered(overtaken);
    await a.submit(stream, 'Add'); // a knows one addition
    await b.submit(stream, 'Add'); // the second, and its notice
    // a: the second addition and its notice (stored by b), then on the reloaded stream the third addition and
    // its notice (stored by c meanwhile), then the fourth alone.
    const decision = await a.submit(stream, 'Add');
    expect(decision.events).toEqual([{ type: 'Added' }]);
    expect(decision.state).toEqual({ added: 4, noticed: ['Noticed2', 'Noticed3'] });
    expect((await store.readStream(stream)).map((e) => e.type)).toEqual([
      'Added',
      'Added',
      'Noticed2',
      'Added',
      'Noticed3',
      'Added',
    ]);
  });

  it('do not claim an event the other instance stored first under the same once-only id', async () => {
    // A payment's credit: its id derives from the reference, so two instances deciding it on the same state append
    // the very same event. The store keeps one; only the writer whose append stored it may report it as its own.
    type Credit = { type: 'Credited'; reference: string };
    const credits = () =>
      new StreamWriter<string[], string, Credit>(store, {
        initialState: () => [],
        evolve: (state, event) => [...state, event.reference],
        decide: (reference, state) => (state.includes(reference) ? [] : [{ type: 'Credited', reference }]),
        parse: (stored) => ({
          type: 'Credited',
          reference: (stored.data as { reference: string }).reference,
        }),
        serialize: (event, _command, stream) => ({
          id: deterministicEventId(`${stream}/credit/${event.reference}`),
          type: event.type,
          data: { reference: event.reference },
          metadata: { schemaVersion: 1 },
        }),
      });
    const stream = `credits-${randomUUID()}`;
    const a = credits();
    const b = credits();
    await a.submit(stream, 'first'); // a knows the stream as it was then
    expect((await b.submit(stream, 'paid')).events).toHaveLength(1);
    // a decides on its stale state and appends the same event, which the store already holds.
    const late = await a.submit(stream, 'paid');
    expect(late.events).toEqual([]);
    expect(late.state).toEqual(['first', 'paid']);
    expect((await store.readStream(stream)).map((e) => (e.data as { reference: string }).reference)).toEqual([
      'first',
      'paid',
    ]);
  });

  it('refuse a real reuse of an id, after reading the stream once more, rather than deciding again for ever', async () => {
    const taken = randomUUID();
    await store.append(
      `elsewhere-${randomUUID()}`,
      [{ id: taken, type: 'Taken', data: {}, metadata: { schemaVersion: 1 } }],
      'any',
    );
    const reads: string[] = [];
    const counting = Object.create(store) as PostgresEventStore;
    counting.readStream = (stream, options) => {
      reads.push(stream);
      return store.readStream(stream, options);
    };
    // Every decision gives its event the id another stream holds.
    const reusing = new StreamWriter<number, 'Add', { type: 'Added' }>(counting, {
      initialState: () => 0,
      evolve: (state) => state + 1,
      decide: () => [{ type: 'Added' }],
      parse: () => ({ type: 'Added' }),
      serialize: (event) => ({ id: taken, type: event.type, data: {}, metadata: { schemaVersion: 1 } }),
    });
    await expect(reusing.submit(`writer-${randomUUID()}`, 'Add')).rejects.toBeInstanceOf(
      DuplicateEventIdError,
    );
    expect(reads).toHaveLength(2);
  });
});

/** Each command appends one event carrying its note; the note 'bad-id' gives the event an id that is no UUID. */
const noting = (store: PostgresEventStore, appends: number[] = []) => {
  const counting = Object.create(store) as PostgresEventStore;
  counting.append = (stream, events, expected) => {
    appends.push(events.length);
    return store.append(stream, events, expected);
  };
  return new StreamWriter<number, string, { type: 'Noted'; note: string }>(counting, {
    initialState: () => 0,
    evolve: (count) => count + 1,
    decide: (note) => [{ type: 'Noted', note }],
    parse: (stored) => ({ type: 'Noted', note: (stored.data as { note: string }).note }),
    serialize: (event): NewEvent => ({
      id: event.note === 'bad-id' ? 'not-a-uuid' : randomUUID(),
      type: event.type,
      data: { note: event.note, detail: { theNote: event.note } },
      metadata: { schemaVersion: 1 },
    }),
  });
};

describe('one command whose event cannot be stored, in a group of clean ones', () => {
  let database: Database;
  let store: PostgresEventStore;
  beforeAll(async () => {
    database = await testDatabase();
    store = await testStore(database);
  });
  afterAll(async () => {
    await store.close();
    await database.close();
  });

  /** The first command goes alone; the rest queue behind its append and are appended as one group. */
  const submitGroup = (writer: ReturnType<typeof noting>, stream: string, notes: string[]) =>
    Promise.allSettled(notes.map((note) => writer.submit(stream, note)));

  it('refuses text PostgreSQL cannot keep as invalid, naming the field, and appends the others', async () => {
    const stream = `noted-${randomUUID()}`;
    const appends: number[] = [];
    const notes = ['first', ...Array.from({ length: 20 }, (_, i) => `clean-${i}`)];
    notes.splice(7, 0, 'nul \u0000 here');
    notes.splice(14, 0, 'lone \ud800 here');
    const results = await submitGroup(noting(store, appends), stream, notes);
    const refused = results.flatMap((r, i) => (r.status === 'rejected' ? [[notes[i], r.reason]] : []));
    expect(refused.map(([note]) => note)).toEqual(['nul \u0000 here', 'lone \ud800 here']);
    for (const [, reason] of refused) {
      expect(reason).toBeInstanceOf(DomainError);
      expect(reason).toMatchObject({ kind: 'invalid', field: 'note' });
    }
    expect((refused[0] as [string, Error])[1].message).toBe(
      "'note' holds a NUL character (U+0000), which cannot be stored",
    );
    expect((refused[1] as [string, Error])[1].message).toMatch(/unpaired surrogate \(U\+D800\)/);
    const stored = await store.readStream(stream);
    expect(stored.map((e) => (e.data as { note: string }).note)).toEqual(
      notes.filter((n) => !/nul|lone/.test(n)),
    );
    // Refused before the store saw them: the group still went in one append.
    expect(appends).toEqual([1, notes.length - 3]);
  });

  it('fails only the command whose event the store refuses, retrying the rest of its group', async () => {
    const stream = `noted-${randomUUID()}`;
    const appends: number[] = [];
    const notes = ['first', ...Array.from({ length: 30 }, (_, i) => `clean-${i}`)];
    notes.splice(19, 0, 'bad-id');
    const results = await submitGroup(noting(store, appends), stream, notes);
    const refused = results.flatMap((r, i) => (r.status === 'rejected' ? [[notes[i], r.reason]] : []));
    expect(refused.map(([note]) => note)).toEqual(['bad-id']);
    expect((refused[0] as [string, Error])[1]).toBeInstanceOf(UnstorableEventError);
    const stored = await store.readStream(stream);
    expect(stored.map((e) => (e.data as { note: string }).note)).toEqual(notes.filter((n) => n !== 'bad-id'));
    expect(stored.map((e) => e.revision)).toEqual(stored.map((_, i) => i));
    // The group of 31 was tried whole, then halved down to the offender: a few appends, not one per command.
    expect(appends[1]).toBe(notes.length - 1);
    expect(appends.length).toBeLessThanOrEqual(2 + 2 * Math.ceil(Math.log2(notes.length)));
  });

  it('reports content the store refuses as an UnstorableEventError, failing no other stream', async () => {
    const event = (note: string): NewEvent => ({
      id: randomUUID(),
      type: 'Noted',
      data: { note },
      metadata: { schemaVersion: 1 },
    });
    const streams = Array.from({ length: 10 }, () => `direct-${randomUUID()}`);
    const results = await Promise.allSettled(
      streams.map((stream, i) => store.append(stream, [event(i === 4 ? 'a\u0000b' : 'clean')], 'no_stream')),
    );
    expect(results.map((r) => r.status)).toEqual(streams.map((_, i) => (i === 4 ? 'rejected' : 'fulfilled')));
    expect((results[4] as PromiseRejectedResult).reason).toBeInstanceOf(UnstorableEventError);
  });
});
