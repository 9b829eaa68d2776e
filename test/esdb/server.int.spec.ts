import { randomUUID } from 'node:crypto';
import {
  ANY,
  BACKWARDS,
  END,
  EventStoreDBClient,
  eventTypeFilter,
  excludeSystemEvents,
  FORWARDS,
  jsonEvent,
  NO_STREAM,
  type Position,
  type ResolvedEvent,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
  streamNameFilter,
  WrongExpectedVersionError,
} from '@eventstore/db-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type EsdbTestServer, startEsdbServer } from './server.ts';

let server: EsdbTestServer;
let client: EventStoreDBClient;

beforeEach(async () => {
  server = await startEsdbServer();
  client = EventStoreDBClient.connectionString(server.url);
});

afterEach(async () => {
  await client.dispose();
  await server.stop();
});

const event = (type: string, data: Record<string, unknown> = {}, id = randomUUID()) =>
  jsonEvent({ id, type, data });

async function collect(read: AsyncIterable<ResolvedEvent>): Promise<ResolvedEvent[]> {
  const out: ResolvedEvent[] = [];
  for await (const resolved of read) out.push(resolved);
  return out;
}

const types = (events: ResolvedEvent[]) => events.map((e) => e.event?.type);

/** Resolves with the first `count` events a subscription delivers. */
function take(subscription: AsyncIterable<ResolvedEvent>, count: number): Promise<ResolvedEvent[]> {
  return (async () => {
    const out: ResolvedEvent[] = [];
    for await (const resolved of subscription) {
      out.push(resolved);
      if (out.length === count) break;
    }
    return out;
  })();
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.unreachable('expected a rejection'),
    (error: unknown) => error,
  );
}

describe('appendToStream', () => {
  it('stores json and binary events with revisions, positions and timestamps', async () => {
    const before = Date.now();
    const first = await client.appendToStream('order-1', [
      event('Created', { n: 1 }),
      event('Paid', { n: 2 }),
    ]);
    const second = await client.appendToStream('order-1', {
      id: randomUUID(),
      type: 'Blob',
      contentType: 'application/octet-stream',
      data: Uint8Array.from([1, 2, 3]),
      metadata: { correlationId: 'c-1' },
    });

    expect(first.nextExpectedRevision).toBe(1n);
    expect(second.nextExpectedRevision).toBe(2n);
    expect(second.position?.commit).toBeGreaterThan(first.position?.commit ?? 0n);

    const read = await collect(client.readStream('order-1'));
    expect(read.map((e) => e.event?.revision)).toEqual([0n, 1n, 2n]);
    expect(read[0]?.event).toMatchObject({
      streamId: 'order-1',
      type: 'Created',
      data: { n: 1 },
      isJson: true,
    });
    expect(read[2]?.event).toMatchObject({ isJson: false, metadata: { correlationId: 'c-1' } });
    expect(read[2]?.event?.data).toEqual(Uint8Array.from([1, 2, 3]));
    expect(read[2]?.event?.position).toEqual(second.position);
    const created = read[0]?.event?.created.getTime() ?? 0;
    expect(created).toBeGreaterThanOrEqual(before);
    expect(created).toBeLessThanOrEqual(Date.now());
  });

  it('enforces expected revisions with WrongExpectedVersionError', async () => {
    await client.appendToStream('s', event('A'), { expectedRevision: NO_STREAM });
    await client.appendToStream('s', event('B'), { expectedRevision: 0n });
    await client.appendToStream('s', event('C'), { expectedRevision: STREAM_EXISTS });
    await client.appendToStream('s', event('D'), { expectedRevision: ANY });

    const stale = await rejection(client.appendToStream('s', event('X'), { expectedRevision: 1n }));
    expect(stale).toBeInstanceOf(WrongExpectedVersionError);
    expect(stale).toMatchObject({ streamName: 's', actualVersion: 3n, expectedVersion: 1n });

    const exists = await rejection(client.appendToStream('s', event('X'), { expectedRevision: NO_STREAM }));
    expect(exists).toMatchObject({ actualVersion: 3n, expectedVersion: NO_STREAM });

    const missing = await rejection(
      client.appendToStream('nope', event('X'), { expectedRevision: STREAM_EXISTS }),
    );
    expect(missing).toBeInstanceOf(WrongExpectedVersionError);
    expect(missing).toMatchObject({ actualVersion: NO_STREAM, expectedVersion: STREAM_EXISTS });

    const ahead = await rejection(client.appendToStream('nope', event('X'), { expectedRevision: 0n }));
    expect(ahead).toMatchObject({ actualVersion: NO_STREAM, expectedVersion: 0n });

    expect(types(await collect(client.readStream('s')))).toEqual(['A', 'B', 'C', 'D']);
  });

  it('treats a retried append as idempotent', async () => {
    await client.appendToStream('s', event('Before'));
    const batch = [event('A'), event('B')];
    const original = await client.appendToStream('s', batch, { expectedRevision: 0n });
    await client.appendToStream('s', event('After'));

    expect(await client.appendToStream('s', batch, { expectedRevision: 0n })).toEqual(original);
    expect(await client.appendToStream('s', batch, { expectedRevision: ANY })).toEqual(original);
    const partial = [batch[0], event('Other')].filter((e) => e !== undefined);
    expect(await rejection(client.appendToStream('s', partial, { expectedRevision: 0n }))).toBeInstanceOf(
      WrongExpectedVersionError,
    );

    expect(types(await collect(client.readStream('s')))).toEqual(['Before', 'A', 'B', 'After']);
    expect(await collect(client.readAll())).toHaveLength(4);
  });
});

describe('readStream', () => {
  beforeEach(async () => {
    await client.appendToStream(
      's',
      ['E0', 'E1', 'E2', 'E3'].map((t) => event(t)),
    );
  });

  it('fails with StreamNotFoundError for a missing stream', async () => {
    const error = await rejection(collect(client.readStream('missing')));
    expect(error).toBeInstanceOf(StreamNotFoundError);
    expect(error).toMatchObject({ streamName: 'missing' });
  });

  it('honours start, direction and maxCount', async () => {
    const read = (options: Parameters<EventStoreDBClient['readStream']>[1]) =>
      collect(client.readStream('s', options)).then(types);
    expect(await read({ fromRevision: 2n })).toEqual(['E2', 'E3']);
    expect(await read({ fromRevision: START, maxCount: 2 })).toEqual(['E0', 'E1']);
    expect(await read({ fromRevision: END })).toEqual([]);
    expect(await read({ fromRevision: END, direction: BACKWARDS })).toEqual(['E3', 'E2', 'E1', 'E0']);
    expect(await read({ fromRevision: 1n, direction: BACKWARDS })).toEqual(['E1', 'E0']);
    expect(await read({ fromRevision: 9n, direction: BACKWARDS, maxCount: 1 })).toEqual(['E3']);
    expect(await read({ fromRevision: 9n })).toEqual([]);
  });
});

describe('readAll', () => {
  let positions: Position[];

  beforeEach(async () => {
    await client.appendToStream('a', [event('A0'), event('A1')]);
    await client.appendToStream('b', [event('B0')]);
    await client.appendToStream('a', [event('A2')]);
    positions = (await collect(client.readAll()))
      .map((e) => e.event?.position)
      .filter((p) => p !== undefined);
  });

  it('reads the global log in order with strictly increasing positions', async () => {
    expect(types(await collect(client.readAll()))).toEqual(['A0', 'A1', 'B0', 'A2']);
    const commits = positions.map((p) => p.commit);
    expect(commits).toEqual([...commits].sort((x, y) => (x < y ? -1 : 1)));
    expect(new Set(commits).size).toBe(4);
  });

  it('includes the event at a position going forwards and excludes it going backwards', async () => {
    const from = positions[2];
    expect(types(await collect(client.readAll({ fromPosition: from })))).toEqual(['B0', 'A2']);
    expect(types(await collect(client.readAll({ fromPosition: from, direction: BACKWARDS })))).toEqual([
      'A1',
      'A0',
    ]);
  });

  it('honours START, END, direction and maxCount', async () => {
    const read = (options: Parameters<EventStoreDBClient['readAll']>[0]) =>
      collect(client.readAll(options)).then(types);
    expect(await read({ fromPosition: END, direction: BACKWARDS, maxCount: 2 })).toEqual(['A2', 'B0']);
    expect(await read({ fromPosition: END, direction: FORWARDS })).toEqual([]);
    expect(await read({ fromPosition: START, direction: BACKWARDS })).toEqual([]);
    expect(await read({ fromPosition: START, maxCount: 1 })).toEqual(['A0']);
  });
});

describe('subscribeToAll', () => {
  it('catches up, signals caughtUp, then delivers live appends exactly once and in order', async () => {
    await client.appendToStream('s', [event('E0'), event('E1')]);
    const subscription = client.subscribeToAll({ fromPosition: START });
    const caughtUp = new Promise((resolve) => subscription.once('caughtUp', resolve));
    const received = take(subscription, 5);
    await caughtUp;
    await client.appendToStream('s', event('E2'));
    await client.appendToStream('t', [event('E3'), event('E4')]);
    expect(types(await received)).toEqual(['E0', 'E1', 'E2', 'E3', 'E4']);
  });

  it('resumes strictly after a given position', async () => {
    await client.appendToStream('s', [event('E0'), event('E1'), event('E2')]);
    const [, second] = await collect(client.readAll());
    const subscription = client.subscribeToAll({ fromPosition: second?.event?.position });
    expect(types(await take(subscription, 1))).toEqual(['E2']);
  });

  it('from END only sees new events', async () => {
    await client.appendToStream('s', event('Old'));
    const subscription = client.subscribeToAll({ fromPosition: END });
    await new Promise((resolve) => subscription.once('confirmation', resolve));
    const received = take(subscription, 1);
    await client.appendToStream('s', event('New'));
    expect(types(await received)).toEqual(['New']);
  });

  it('feeds concurrent subscribers the same gap-free sequence under concurrent appends', async () => {
    const total = 60;
    const subscriptions = [0, 1, 2].map(() => client.subscribeToAll({ fromPosition: START }));
    const received = subscriptions.map((s) => take(s, total));
    await Promise.all(
      Array.from({ length: total / 2 }, (_, i) =>
        client.appendToStream(`s-${i % 3}`, [event(`E${2 * i}`), event(`E${2 * i + 1}`)]),
      ),
    );
    const expected = types(await collect(client.readAll()));
    expect(expected).toHaveLength(total);
    for (const events of await Promise.all(received)) expect(types(events)).toEqual(expected);
  });

  it('streams a catch-up larger than the transport buffers without losing events', async () => {
    const payload = 'x'.repeat(4_000);
    for (let batch = 0; batch < 5; batch++) {
      await client.appendToStream(
        'big',
        Array.from({ length: 100 }, (_, i) => event('Big', { n: batch * 100 + i, payload })),
      );
    }
    const received = await take(client.subscribeToAll({ fromPosition: START }), 500);
    expect(received.map((e) => (e.event?.data as { n: number } | undefined)?.n)).toEqual(
      Array.from({ length: 500 }, (_, i) => i),
    );
  });

  it('applies stream-name and event-type filters and reports checkpoints', async () => {
    await client.appendToStream('order-1', event('Placed'));
    await client.appendToStream('user-1', event('Registered'));
    await client.appendToStream('order-2', event('Shipped'));

    const byStream = client.subscribeToAll({ filter: streamNameFilter({ prefixes: ['order-'] }) });
    expect((await take(byStream, 2)).map((e) => e.event?.streamId)).toEqual(['order-1', 'order-2']);

    const byType = client.subscribeToAll({ filter: eventTypeFilter({ regex: '^Reg' }) });
    expect(types(await take(byType, 1))).toEqual(['Registered']);

    const checkpoints: Position[] = [];
    const all = client.subscribeToAll({
      filter: excludeSystemEvents({
        maxSearchWindow: 1,
        checkpointReached: (_s, position) => {
          checkpoints.push(position);
        },
      }),
    });
    expect(await take(all, 3)).toHaveLength(3);
    expect(checkpoints.length).toBeGreaterThan(0);
  });

  it('ends the call on unsubscribe and ends live subscriptions cleanly on stop', async () => {
    const unsubscribed = client.subscribeToAll();
    await new Promise((resolve) => unsubscribed.once('confirmation', resolve));
    await unsubscribed.unsubscribe();

    const live = client.subscribeToAll();
    await new Promise((resolve) => live.once('confirmation', resolve));
    const drained = collect(live);
    await server.stop();
    expect(await drained).toEqual([]);
  });
});

describe('subscribeToStream', () => {
  it('catches up from a revision (exclusive) and follows live appends to that stream only', async () => {
    await client.appendToStream('s', [event('E0'), event('E1')]);
    const subscription = client.subscribeToStream('s', { fromRevision: 0n });
    const received = take(subscription, 3);
    await client.appendToStream('other', event('Noise'));
    await client.appendToStream('s', [event('E2'), event('E3')]);
    expect((await received).map((e) => [e.event?.type, e.event?.revision])).toEqual([
      ['E1', 1n],
      ['E2', 2n],
      ['E3', 3n],
    ]);
  });

  it('waits for a stream that does not exist yet', async () => {
    const received = take(client.subscribeToStream('later', { fromRevision: START }), 1);
    await client.appendToStream('later', event('First'));
    expect(types(await received)).toEqual(['First']);
  });
});
