import { randomUUID } from 'node:crypto';
import { CATALOG_STREAM, type CatalogEvent } from '../../events/catalog.ts';
import { parseAs, toNewEvent } from '../../events/index.ts';
import type { EventStore } from '../../events/store.ts';
import { type Decision, StreamWriter } from '../stream-writer.ts';
import {
  type CatalogState,
  decideSnapshot,
  evolveCatalog,
  type Listing,
  type SnapshotModel,
} from './decide.ts';

interface TakeSnapshot {
  current: readonly SnapshotModel[];
  /** The providers' lists known now (those not known keep what the last snapshot says). */
  listings: readonly Listing[];
  now: Date;
}

/**
 * Records the catalog and the providers' lists when they differ from the last snapshot (one writer per process;
 * another instance's append surfaces as a revision conflict, and the command is decided again on top of it).
 */
export class CatalogCommands {
  private readonly writer: StreamWriter<CatalogState, TakeSnapshot, CatalogEvent>;

  constructor(store: EventStore) {
    this.writer = new StreamWriter(store, {
      initialState: () => undefined,
      evolve: evolveCatalog,
      decide: (command, state) => decideSnapshot(state, command.current, command.listings),
      parse: (stored) => parseAs<CatalogEvent>(stored),
      serialize: (event, { now }) => toNewEvent(event, randomUUID(), { now }),
    });
  }

  snapshot(
    current: readonly SnapshotModel[],
    listings: readonly Listing[],
    now: Date,
  ): Promise<Decision<CatalogState, CatalogEvent>> {
    return this.writer.submit(CATALOG_STREAM, { current, listings, now });
  }
}
