import { randomUUID } from 'node:crypto';
import { chainHash, GENESIS_HASH, type StoredEvent } from '../../events/envelope.ts';
import type { GatewayEvent } from '../../events/index.ts';

/** A hand-made log: events appended to streams with real revisions, positions and hash chains. */
export class LogBuilder {
  readonly events: StoredEvent[] = [];
  private readonly heads = new Map<string, { revision: number; hash: string }>();
  private clock = Date.parse('2026-03-10T12:00:00Z');

  append(stream: string, event: GatewayEvent, occurredAt?: Date): StoredEvent {
    const head = this.heads.get(stream) ?? { revision: -1, hash: GENESIS_HASH };
    this.clock += 1000;
    const fields = {
      id: randomUUID(),
      type: event.type,
      stream,
      revision: head.revision + 1,
      occurredAt: occurredAt ?? new Date(this.clock),
      data: event.data,
      metadata: { schemaVersion: 1 },
    };
    const position = BigInt(this.events.length + 1);
    const stored: StoredEvent = {
      ...fields,
      position,
      checkpoint: `1/${position}`,
      hash: chainHash(head.hash, fields),
      prevHash: head.hash,
    };
    this.heads.set(stream, { revision: stored.revision, hash: stored.hash });
    this.events.push(stored);
    return stored;
  }
}
