/**
 * Groups an async stream into runs of whatever has already arrived (at least one item, at most `max`), reading
 * ahead by at most `max` items so that a slow consumer bounds memory.
 */
export async function* chunks<T>(source: AsyncIterable<T>, max: number): AsyncIterable<T[]> {
  const iterator = source[Symbol.asyncIterator]();
  const buffer: T[] = [];
  let done = false;
  let failure: unknown;
  let wake: (() => void) | undefined;
  let pumping: Promise<void> | undefined;
  let room: (() => void) | undefined;

  const pump = async () => {
    try {
      for (;;) {
        while (buffer.length >= max) await new Promise<void>((r) => (room = r));
        const next = await iterator.next();
        if (next.done) break;
        buffer.push(next.value);
        wake?.();
      }
    } catch (error) {
      failure = error;
    }
    done = true;
    wake?.();
  };

  pumping = pump();
  try {
    for (;;) {
      if (buffer.length === 0 && !done) await new Promise<void>((r) => (wake = r));
      wake = undefined;
      if (buffer.length > 0) {
        const run = buffer.splice(0, max);
        room?.();
        room = undefined;
        yield run;
        continue;
      }
      if (failure) throw failure;
      if (done) return;
    }
  } finally {
    await iterator.return?.();
    void pumping;
  }
}
