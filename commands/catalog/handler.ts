import { randomUUID } from 'node:crypto';
import { CATALOG_STREAM, type CatalogEvent } from '../../events/catalog.ts';
import { parseAs, toNewEvent } from '../../events/index.ts';
import type { EventStore } from '../../events/store.ts';
import { type Decision, StreamWriter } from '../stream-writer.ts';
import { type CatalogState, decideSnapshot, evolveCatalog, type SnapshotModel } from './decide.ts';

interface TakeSnapshot {
  current: readonly SnapshotModel[];
  now: Date;
}

/** Records the catalog at start when it differs from the last snapshot (one writer; a racing start re-decides). */
export class CatalogCommands {
  private readonly writer: StreamWriter<CatalogState, TakeSnapshot, CatalogEvent>;

  constructor(store: EventStore) {
    this.writer = new StreamWriter(store, {
      initialState: () => undefined,
      evolve: evolveCatalog,
      decide: (command, state) => decideSnapshot(state, command.current),
      parse: (stored) => parseAs<CatalogEvent>(stored),
      serialize: (event, { now }) => toNewEvent(event, randomUUID(), { now }),
    });
  }

  snapshot(current: readonly SnapshotModel[], now: Date): Promise<Decision<CatalogState, CatalogEvent>> {
    return this.writer.submit(CATALOG_STREAM, { current, now });
  }
}
