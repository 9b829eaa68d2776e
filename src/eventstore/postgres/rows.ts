import type { StoredEvent } from '../../../events/envelope.ts';

export interface EventRow {
  position: string;
  transaction_id: string;
  id: string;
  stream: string;
  revision: string;
  type: string;
  data: unknown;
  metadata: StoredEvent['metadata'];
  occurred_at: Date;
  prev_hash: string;
  hash: string;
}

export const EVENT_COLUMNS =
  'position, transaction_id, id, stream, revision, type, data, metadata, occurred_at, prev_hash, hash';

export function toCheckpoint(transactionId: string, position: string): string {
  return `${transactionId}/${position}`;
}

export function parseCheckpoint(checkpoint: string): [transactionId: string, position: string] {
  if (checkpoint === '') return ['0', '0'];
  const match = /^(\d+)\/(\d+)$/.exec(checkpoint);
  if (!match) throw new Error(`not a postgres checkpoint: ${checkpoint}`);
  return [match[1] as string, match[2] as string];
}

export function compareCheckpoints(a: string, b: string): number {
  const [ax, ap] = parseCheckpoint(a).map(BigInt) as [bigint, bigint];
  const [bx, bp] = parseCheckpoint(b).map(BigInt) as [bigint, bigint];
  if (ax !== bx) return ax < bx ? -1 : 1;
  return ap === bp ? 0 : ap < bp ? -1 : 1;
}

export function fromRow(row: EventRow): StoredEvent {
  return {
    id: row.id,
    type: row.type,
    stream: row.stream,
    revision: Number(row.revision),
    position: BigInt(row.position),
    checkpoint: toCheckpoint(row.transaction_id, row.position),
    occurredAt: row.occurred_at,
    data: row.data,
    metadata: row.metadata,
    hash: row.hash,
    prevHash: row.prev_hash,
  };
}
