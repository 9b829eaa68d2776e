import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NewEvent, type StoredEvent, verifyChain } from '../../events/envelope.ts';
import {
  DuplicateEventIdError,
  type EventStore,
  START,
  WrongExpectedRevisionError,
} from '../../events/store.ts';

export interface ContractTarget {
  store: EventStore;
  close(): Promise<void>;
}

export function newEvent(type = 'ThingHappened', data: Record<string, unknown> = {}): NewEvent {
  return {
    id: randomUUID(),
    type,
    data: { value: randomUUID(), ...data },
    metadata: { schemaVersion: 1, correlationId: randomUUID(), causationId: randomUUID() },
  };
}

function streamName(): string {
  return `thing-${randomUUID()}`;
}

async function collect(iterable: AsyncIterable<StoredEvent>, count: number, signal: AbortController) {
  const seen: StoredEvent[] = [];
  for await (const event of iterable) {
    seen.push(event);
    if (seen.length === count) signal.abort();
  }
  return seen;
}

/** The behaviour every event-store adapter must share. */
export function eventStoreContract(name: string, open: () => Promise<ContractTarget>): void {
  describe(`event store contract: ${name}`, () => {
    let target: ContractTarget;
    let store: EventStore;
    beforeAll(async () => {
      target = await open();
      store = target.store;
    });
    afterAll(async () => {
      await target?.close();
    });

    it('numbers revisions from 0 and stores the whole envelope', async () => {
      const stream = streamName();
      const events = [newEvent('A', { n: 1 }), newEvent('B', { n: 2 })];
      const result = await store.append(stream, events, 'no_stream');
      expect(result.nextRevision).toBe(1);
      const read = await store.readStream(stream);
      expect(read.map((e) => [e.id, e.type, e.stream, e.revision])).toEqual([
        [events[0]?.id, 'A', stream, 0],
        [events[1]?.id, 'B', stream, 1],
      ]);
      expect(read[0]?.data).toEqual(events[0]?.data);
      expect(read[0]?.metadata).toEqual(events[0]?.metadata);
      expect(read[0]?.occurredAt).toBeInstanceOf(Date);
      expect(Math.abs((read[0]?.occurredAt.getTime() ?? 0) - Date.now())).toBeLessThan(60_000);
      expect(read[1]?.checkpoint).toBe(result.checkpoint);
      expect(store.compareCheckpoints(read[0]?.checkpoint ?? '', read[1]?.checkpoint ?? '')).toBeLessThan(0);
      expect(verifyChain(read)).toEqual([]);
    });

    it('keeps the occurredAt a handler gives, in UTC', async () => {
      const stream = streamName();
      const occurredAt = new Date('2026-01-31T23:59:59.123Z');
      await store.append(stream, [{ ...newEvent(), occurredAt }], 'any');
      const [read] = await store.readStream(stream);
      expect(read?.occurredAt.toISOString()).toBe('2026-01-31T23:59:59.123Z');
    });

    it('enforces no_stream', async () => {
      const stream = streamName();
      await store.append(stream, [newEvent()], 'no_stream');
      const error = await store.append(stream, [newEvent()], 'no_stream').catch((e) => e);
      expect(error).toBeInstanceOf(WrongExpectedRevisionError);
      expect(error.actual).toBe(0);
      expect(await store.readStream(stream)).toHaveLength(1);
    });

    it('enforces stream_exists', async () => {
      const stream = streamName();
      const error = await store.append(stream, [newEvent()], 'stream_exists').catch((e) => e);
      expect(error).toBeInstanceOf(WrongExpectedRevisionError);
      expect(error.actual).toBe(-1);
      await store.append(stream, [newEvent()], 'any');
      expect((await store.append(stream, [newEvent()], 'stream_exists')).nextRevision).toBe(1);
    });

    it('enforces an exact revision', async () => {
      const stream = streamName();
      await store.append(stream, [newEvent(), newEvent()], 'no_stream');
      const stale = await store.append(stream, [newEvent()], 0).catch((e) => e);
      expect(stale).toBeInstanceOf(WrongExpectedRevisionError);
      expect(stale.actual).toBe(1);
      const ahead = await store.append(stream, [newEvent()], 5).catch((e) => e);
      expect(ahead).toBeInstanceOf(WrongExpectedRevisionError);
      expect((await store.append(stream, [newEvent()], 1)).nextRevision).toBe(2);
      const missing = await store.append(streamName(), [newEvent()], 0).catch((e) => e);
      expect(missing).toBeInstanceOf(WrongExpectedRevisionError);
      expect(missing.actual).toBe(-1);
    });

    it('lets exactly one of many concurrent writers win each revision', async () => {
      const stream = streamName();
      await store.append(stream, [newEvent()], 'no_stream');
      const outcomes = await Promise.allSettled(
        Array.from({ length: 8 }, () => store.append(stream, [newEvent()], 0)),
      );
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      for (const o of outcomes) {
        if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(WrongExpectedRevisionError);
      }
      expect(await store.readStream(stream)).toHaveLength(2);
    });

    it('treats a re-appended batch as a successful no-op, whatever the expectation', async () => {
      const stream = streamName();
      const batch = [newEvent(), newEvent()];
      const first = await store.append(stream, batch, 'no_stream');
      await store.append(stream, [newEvent()], 1);
      for (const expected of ['no_stream', 'any', 'stream_exists'] as const) {
        const again = await store.append(stream, batch, expected);
        expect(again.nextRevision).toBe(first.nextRevision);
        expect(again.checkpoint).toBe(first.checkpoint);
      }
      const tail = [newEvent()];
      await store.append(stream, tail, 2);
      expect((await store.append(stream, tail, 2)).nextRevision).toBe(3);
      expect((await store.append(stream, tail, 'any')).nextRevision).toBe(3);
      expect(await store.readStream(stream)).toHaveLength(4);
    });

    it('refuses a batch that only partly matches stored events', async () => {
      const stream = streamName();
      const [a, b] = [newEvent(), newEvent()];
      await store.append(stream, [a as NewEvent], 'no_stream');
      const error = await store.append(stream, [a as NewEvent, b as NewEvent], 'no_stream').catch((e) => e);
      expect(error).toBeInstanceOf(DuplicateEventIdError);
      expect(await store.readStream(stream)).toHaveLength(1);
    });

    it('reads a stream from a revision, with a limit, and an unknown stream as empty', async () => {
      const stream = streamName();
      await store.append(stream, [newEvent(), newEvent(), newEvent(), newEvent()], 'no_stream');
      const page = await store.readStream(stream, { fromRevision: 1, maxCount: 2 });
      expect(page.map((e) => e.revision)).toEqual([1, 2]);
      expect(await store.readStream(streamName())).toEqual([]);
    });

    it('reads all events in one global order, exclusive of the checkpoint', async () => {
      const stream = streamName();
      const before = await store.append(streamName(), [newEvent()], 'any');
      const events = [newEvent(), newEvent(), newEvent()];
      await store.append(stream, events, 'no_stream');
      const after = await readAllFrom(store, before.checkpoint);
      expect(after.filter((e) => e.stream === stream).map((e) => e.id)).toEqual(events.map((e) => e.id));
      expect(after.some((e) => e.checkpoint === before.checkpoint)).toBe(false);
      const everything = await readAllFrom(store, START);
      expect(everything.map((e) => e.id)).toEqual(expect.arrayContaining(events.map((e) => e.id)));
      for (let i = 1; i < everything.length; i++) {
        expect(
          store.compareCheckpoints(everything[i - 1]?.checkpoint ?? '', everything[i]?.checkpoint ?? ''),
        ).toBe(-1);
      }
    });

    it('subscribes: catches up, then follows live appends exactly once', async () => {
      const stream = streamName();
      const start = await store.append(streamName(), [newEvent()], 'any');
      const early = [newEvent(), newEvent()];
      await store.append(stream, early, 'no_stream');
      const controller = new AbortController();
      const late = Array.from({ length: 20 }, () => newEvent());
      const seen = collect(
        filterStream(store.subscribe(start.checkpoint, controller.signal), stream),
        early.length + late.length,
        controller,
      );
      await new Promise((r) => setTimeout(r, 100));
      await Promise.all(late.map((event, i) => store.append(stream, [event], 'any').then(() => i)));
      const ids = (await seen).map((e) => e.id);
      expect(ids.slice(0, 2)).toEqual(early.map((e) => e.id));
      expect(new Set(ids).size).toBe(ids.length);
      expect([...ids].sort()).toEqual([...early, ...late].map((e) => e.id).sort());
    });

    it('hash-chains each stream so that any change is detectable', async () => {
      const stream = streamName();
      await store.append(stream, [newEvent(), newEvent()], 'no_stream');
      await store.append(stream, [newEvent()], 1);
      const read = await store.readStream(stream);
      expect(verifyChain(read)).toEqual([]);
      const edited = read.map((e, i) => (i === 1 ? { ...e, data: { value: 'edited' } } : e));
      expect(verifyChain(edited).map((b) => b.revision)).toContain(1);
      const deleted = read.filter((e) => e.revision !== 1);
      expect(verifyChain(deleted).length).toBeGreaterThan(0);
    });
  });
}

async function* filterStream(events: AsyncIterable<StoredEvent>, stream: string) {
  for await (const event of events) if (event.stream === stream) yield event;
}

export async function readAllFrom(store: EventStore, from: string): Promise<StoredEvent[]> {
  const all: StoredEvent[] = [];
  let checkpoint = from;
  for (;;) {
    const page = await store.readAll(checkpoint, { maxCount: 200 });
    if (page.length === 0) return all;
    all.push(...page);
    checkpoint = page[page.length - 1]?.checkpoint ?? checkpoint;
  }
}
