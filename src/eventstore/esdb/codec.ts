import { type AllStreamResolvedEvent, type Position, type ResolvedEvent, START } from '@eventstore/db-client';
import type { EventMetadata, StoredEvent } from '../../../events/envelope.ts';

/** The envelope fields EventStoreDB has no place for travel in the event's metadata under this key. */
const ENVELOPE_KEY = '$gw';

interface EnvelopeExtras {
  occurredAt: string;
  prevHash: string;
  hash: string;
}

export function encodeMetadata(metadata: EventMetadata, extras: EnvelopeExtras): Record<string, unknown> {
  return { ...metadata, [ENVELOPE_KEY]: extras };
}

export function toCheckpoint(position: Position): string {
  return `${position.commit}/${position.prepare}`;
}

export function toPosition(checkpoint: string): Position | typeof START {
  if (checkpoint === '') return START;
  const match = /^(\d+)\/(\d+)$/.exec(checkpoint);
  if (!match) throw new Error(`not an EventStoreDB checkpoint: ${checkpoint}`);
  return { commit: BigInt(match[1] as string), prepare: BigInt(match[2] as string) };
}

export function compareCheckpoints(a: string, b: string): number {
  if (a === b) return 0;
  if (a === '') return -1;
  if (b === '') return 1;
  const pa = toPosition(a) as Position;
  const pb = toPosition(b) as Position;
  if (pa.commit !== pb.commit) return pa.commit < pb.commit ? -1 : 1;
  return pa.prepare === pb.prepare ? 0 : pa.prepare < pb.prepare ? -1 : 1;
}

/** Events the gateway wrote; system events and links are not part of its log. */
export function isGatewayEvent(resolved: ResolvedEvent | AllStreamResolvedEvent): boolean {
  const event = resolved.event;
  return (
    event !== undefined && !event.streamId.startsWith('$') && !event.type.startsWith('$') && event.isJson
  );
}

export function fromResolved(resolved: ResolvedEvent | AllStreamResolvedEvent): StoredEvent {
  const event = resolved.event;
  if (!event?.isJson) throw new Error('not a JSON event');
  const { [ENVELOPE_KEY]: extras, ...metadata } = (event.metadata ?? {}) as Record<string, unknown>;
  const envelope = (extras ?? {}) as Partial<EnvelopeExtras>;
  const position = event.position ?? resolved.commitPosition;
  const commit = typeof position === 'bigint' ? position : (position?.commit ?? 0n);
  return {
    id: event.id,
    type: event.type,
    stream: event.streamId,
    revision: Number(event.revision),
    position: commit,
    checkpoint: event.position ? toCheckpoint(event.position) : '',
    occurredAt: envelope.occurredAt ? new Date(envelope.occurredAt) : event.created,
    data: event.data,
    metadata: metadata as EventMetadata,
    hash: envelope.hash ?? '',
    prevHash: envelope.prevHash ?? '',
  };
}
