import { createHash } from 'node:crypto';

/** Metadata every stored event carries. Extra keys are kept as written. */
export interface EventMetadata {
  schemaVersion: number;
  correlationId?: string;
  causationId?: string;
  [key: string]: unknown;
}

/** An event as a command handler hands it to the store. */
export interface NewEvent<Type extends string = string, Data = unknown> {
  id: string;
  type: Type;
  data: Data;
  metadata: EventMetadata;
  /** Set by the handler from its clock; the store stamps the append time when absent. */
  occurredAt?: Date;
}

/**
 * A stored event. `checkpoint` is the adapter's opaque, totally ordered global position (what subscribers
 * persist); `position` is a readable number in the same order where the adapter allows it.
 */
export interface StoredEvent<Type extends string = string, Data = unknown> {
  id: string;
  type: Type;
  stream: string;
  revision: number;
  position: bigint;
  checkpoint: string;
  occurredAt: Date;
  data: Data;
  metadata: EventMetadata;
  /** SHA-256 (hex) over `prevHash` and the event's canonical JSON: the per-stream hash chain. */
  hash: string;
  prevHash: string;
}

/** The hash that precedes the first event of every stream. */
export const GENESIS_HASH = '0'.repeat(64);

/** JSON with object keys sorted at every depth, so that equal values always hash alike. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'bigint') return JSON.stringify(value.toString());
    return JSON.stringify(value) ?? 'null';
  }
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** The fields the chain covers; the position is excluded because the store assigns it after hashing. */
export interface HashedFields {
  id: string;
  type: string;
  stream: string;
  revision: number;
  occurredAt: Date;
  data: unknown;
  metadata: EventMetadata;
}

export function chainHash(prevHash: string, event: HashedFields): string {
  const body = canonicalJson({
    id: event.id,
    type: event.type,
    stream: event.stream,
    revision: event.revision,
    occurredAt: event.occurredAt.toISOString(),
    data: event.data,
    metadata: event.metadata,
  });
  return createHash('sha256').update(prevHash).update('\n').update(body).digest('hex');
}

export type ChainBreak = { revision: number; reason: string };

/** Checks one stream's events, read in revision order from 0, against their hash chain. */
export function verifyChain(events: readonly StoredEvent[]): ChainBreak[] {
  const breaks: ChainBreak[] = [];
  let prev = GENESIS_HASH;
  events.forEach((event, index) => {
    if (event.revision !== index)
      breaks.push({ revision: event.revision, reason: `expected revision ${index}` });
    if (event.prevHash !== prev)
      breaks.push({ revision: event.revision, reason: 'previous hash does not match' });
    if (chainHash(prev, event) !== event.hash)
      breaks.push({ revision: event.revision, reason: 'content hash mismatch' });
    prev = event.hash;
  });
  return breaks;
}

/** Stream names are `category-id`; the category is the text before the first `-`. */
export function streamCategory(stream: string): string {
  const dash = stream.indexOf('-');
  return dash < 0 ? stream : stream.slice(0, dash);
}
