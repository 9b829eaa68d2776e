import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamWriter } from '../../commands/stream-writer.ts';
import { deterministicEventId } from '../../events/index.ts';
import type { Database } from '../../src/db/database.ts';
import { PostgresEventStore } from '../../src/eventstore/postgres/store.ts';
import { testDatabase } from '../support/database.ts';

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
    store = await PostgresEventStore.open({
      pool: database.pool,
      listenConfig: database.clientConfig,
      schema: database.schema,
      pollIntervalMs: 200,
    });
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
});
