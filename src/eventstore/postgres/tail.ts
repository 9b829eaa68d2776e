import { firstValueFrom, map, merge, type Observable, timer } from 'rxjs';
import type { StoredEvent } from '../../../events/envelope.ts';

type Listener = (events: StoredEvent[]) => void;

/**
 * How long an idle tail waits after a notification before it reads. The notification and the append's own answer
 * leave PostgreSQL together; read at once, the tail's query and the work on what it reads ran before the append's
 * caller was answered, on the path of the request waiting for its charge (0.13–0.48 ms of a light-load answer in
 * alternating runs). A busy tail reads on without waiting.
 */
const NOTIFIED_READ_DELAY_MS = 3;

export interface TailSource {
  readAll(from: string): Promise<StoredEvent[]>;
  compare(a: string, b: string): number;
  /** Emits on each NOTIFY from an append. */
  wakeups: Observable<void>;
  pollIntervalMs: number;
  pageSize: number;
}

/**
 * One reader of the log's head per store, shared by every live subscriber in the process: each append wakes
 * this one loop instead of one query per subscriber. Subscribers catch up on their own and then listen here.
 */
export class SharedTail {
  private readonly listeners = new Set<Listener>();
  private running: Promise<void> | undefined;
  private head: string;
  private wakeCount = 0;

  constructor(
    private readonly source: TailSource,
    start: string,
  ) {
    this.head = start;
    source.wakeups.subscribe(() => {
      this.wakeCount += 1;
    });
  }

  /** Starts delivering what follows the tail's position; returns the way to stop. */
  listen(listener: Listener, from: string): () => void {
    // A listener joining ahead of a tail with no listeners moves it up, so it does not re-read what is known.
    if (this.listeners.size === 0 && this.source.compare(from, this.head) > 0) this.head = from;
    this.listeners.add(listener);
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
    return () => this.listeners.delete(listener);
  }

  private async run(): Promise<void> {
    let hotUntil = 0;
    while (this.listeners.size > 0) {
      const seen = this.wakeCount;
      let page: StoredEvent[];
      try {
        page = await this.source.readAll(this.head);
      } catch {
        await new Promise((r) => setTimeout(r, this.source.pollIntervalMs));
        continue;
      }
      if (page.length > 0) {
        this.head = page[page.length - 1]?.checkpoint ?? this.head;
        for (const listener of this.listeners) listener(page);
        if (page.length === this.source.pageSize) continue;
      }
      if (this.wakeCount !== seen) continue;
      // After a notification the new rows may still be hidden behind an older open transaction: look again
      // soon for a while rather than waiting a whole poll interval.
      const delay = Date.now() < hotUntil ? 20 : this.source.pollIntervalMs;
      const woke = await firstValueFrom(
        merge(
          this.source.wakeups.pipe(map(() => 'notified' as const)),
          timer(delay).pipe(map(() => 'timer' as const)),
        ),
      );
      if (woke === 'notified') {
        hotUntil = Date.now() + 1000;
        await new Promise((r) => setTimeout(r, NOTIFIED_READ_DELAY_MS));
      }
    }
  }
}
