import type { StoredEvent } from '../../events/envelope.ts';
import { type EventStore, START } from '../../events/store.ts';

const PAGE = 1000;

/** Reads the log once, in global order, handing each page on; it can stop at a given checkpoint and go on later. */
export class LogCursor {
  head = START;
  events = 0;

  constructor(
    private readonly store: EventStore,
    private readonly onPage: (events: readonly StoredEvent[]) => Promise<void>,
  ) {}

  /** Reads on to the end of the log as it stands, or up to and including `until`. */
  async advance(until?: string): Promise<void> {
    for (;;) {
      const page = await this.store.readAll(this.head, { maxCount: PAGE });
      const taken =
        until === undefined
          ? page
          : page.filter((e) => this.store.compareCheckpoints(e.checkpoint, until) <= 0);
      const last = taken[taken.length - 1];
      if (!last) return;
      await this.onPage(taken);
      this.head = last.checkpoint;
      this.events += taken.length;
      if (taken.length < PAGE) return;
    }
  }

  /** Whether the cursor has read at least as far as `checkpoint`. */
  reached(checkpoint: string): boolean {
    return this.store.compareCheckpoints(this.head, checkpoint) >= 0;
  }
}
