import { parseEvent } from '../../events/index.ts';
import { logicalEvents } from '../../events/logical.ts';
import type { EventStore } from '../../events/store.ts';

/**
 * A stream's events as every reader folds them: a stored settlement that carries its hold and its request's
 * record stands for three events (events/logical.ts).
 */
export async function logicalStream(
  store: EventStore,
  stream: string,
): Promise<{ type: string; data: Record<string, unknown> }[]> {
  const out: { type: string; data: Record<string, unknown> }[] = [];
  for (const stored of await store.readStream(stream)) {
    const parsed = parseEvent(stored);
    if (!parsed.ok) throw new Error(parsed.error);
    for (const part of logicalEvents(parsed.event))
      out.push({ type: part.type, data: part.data as unknown as Record<string, unknown> });
  }
  return out;
}
