import { type BatchState, evolve, initialState } from '../../commands/batch/decide.ts';
import { type BatchEvent, batchStream } from '../../events/batch.ts';
import { parseAs } from '../../events/index.ts';
import type { EventStore } from '../../events/store.ts';

/** The batch's state folded from its stream, read in pages. */
export async function loadBatch(store: EventStore, batchId: string): Promise<BatchState> {
  let state = initialState();
  for (let from = 0; ; ) {
    const page = await store.readStream(batchStream(batchId), { fromRevision: from, maxCount: 1000 });
    for (const stored of page) {
      const event = parseAs<BatchEvent>(stored);
      if (event) state = evolve(state, event);
      from = stored.revision + 1;
    }
    if (page.length < 1000) return state;
  }
}
