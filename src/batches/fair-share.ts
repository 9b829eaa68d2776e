/**
 * Nested round-robin queues: `shift` takes turns between the first-level keys (accounts), within a key between
 * the second-level keys (the account itself and each of its sub-accounts), and so on down to a FIFO of items.
 * A key that is served goes to the back of its level, so no key is served twice while another waits.
 */
class RoundRobin<T> {
  private readonly levels = new Map<string, RoundRobin<T>>();
  private readonly items: T[] = [];

  get empty(): boolean {
    return this.levels.size === 0 && this.items.length === 0;
  }

  push(path: readonly string[], item: T): void {
    const [head, ...rest] = path;
    if (head === undefined) {
      this.items.push(item);
      return;
    }
    let child = this.levels.get(head);
    if (!child) {
      child = new RoundRobin<T>();
      this.levels.set(head, child);
    }
    child.push(rest, item);
  }

  shift(): T | undefined {
    if (this.items.length > 0) return this.items.shift();
    for (const [key, child] of this.levels) {
      const item = child.shift();
      this.levels.delete(key);
      if (!child.empty) this.levels.set(key, child);
      if (item !== undefined) return item;
    }
    return undefined;
  }

  remove(path: readonly string[], item: T): void {
    const [head, ...rest] = path;
    if (head === undefined) {
      const at = this.items.indexOf(item);
      if (at >= 0) this.items.splice(at, 1);
      return;
    }
    const child = this.levels.get(head);
    child?.remove(rest, item);
    if (child?.empty) this.levels.delete(head);
  }
}

/**
 * The gateway's slots for batch lines run here, shared across every batch it works. A free slot goes to the next
 * waiter in round-robin order by `path` (`[account, sub-account or '', batch]`): accounts take turns line by line,
 * whatever the size or age of their batches, and so do the batches of one payer. Work-conserving: a batch alone
 * gets every slot.
 */
export class FairShare {
  private running = 0;
  private readonly waiting = new RoundRobin<() => void>();

  constructor(private readonly slots: number) {}

  /**
   * Resolves true once a slot is this waiter's, or false, holding none, when `signal` aborts first (a shutdown,
   * or a batch asked to make room). A true must be followed by exactly one `release`.
   */
  acquire(path: readonly string[], signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    if (this.running < this.slots && this.waiting.empty) {
      this.running += 1;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const granted = () => {
        signal.removeEventListener('abort', gaveUp);
        resolve(true);
      };
      const gaveUp = () => {
        this.waiting.remove(path, granted);
        resolve(false);
      };
      signal.addEventListener('abort', gaveUp, { once: true });
      this.waiting.push(path, granted);
    });
  }

  /** Hands the slot to the next waiter in turn, or frees it. */
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running -= 1;
  }
}
