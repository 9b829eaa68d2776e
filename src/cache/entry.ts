import type { ReportedUsage } from '../contracts/chat.ts';
import type { StoredCharge } from '../pipeline/cached.ts';

/** One stored choice of a chat answer: the whole of it, so a streamed replay can say everything the original did. */
export interface CachedChoice {
  index: number;
  content: string;
  reasoning: string | null;
  finishReason: 'stop';
}

export type CachedAnswer =
  | { kind: 'chat'; choices: CachedChoice[]; usage: ReportedUsage }
  | { kind: 'embeddings'; vectors: number[][]; inputTokens: number; usageReported: boolean };

export interface CacheEntry {
  /** Random: it names the entry in the request log and says nothing about the key or the tenant. */
  id: string;
  scope: string;
  accountId: string;
  key: string;
  /** The model and upstream whose answer this is. */
  model: string;
  provider: string;
  sourceRequestId: string;
  createdAt: string;
  expiresAt: string;
  charge: StoredCharge;
  answer: CachedAnswer;
}

/** A stored vector of a semantic entry: the prompt's embedding, in the group of requests it may answer. */
export interface StoredVector {
  /** Monotonic within a scope: an instance reads only what it has not seen yet. */
  seq: number;
  group: string;
  key: string;
  vector: Float32Array;
  /** Its sign bits against the index's hyperplanes (vector-index.ts), when stored with it. */
  signs?: [number, number];
  expiresAtMs: number;
}

/** Where entries live: PostgreSQL tables, or Redis when configured, shared by every instance. */
/**
 * Where entries live. Expiry is judged by the gateway's clock (`now`, epoch milliseconds), the clock that stamped
 * the entries, never by the store's own: a gateway whose clock is not the database's still finds what it stored.
 */
export interface CacheStore {
  get(scope: string, key: string, now: number): Promise<CacheEntry | undefined>;
  put(entry: CacheEntry, now: number): Promise<void>;
  addVector(scope: string, accountId: string, vector: Omit<StoredVector, 'seq'>, now: number): Promise<void>;
  vectorsSince(scope: string, seq: number, now: number): Promise<StoredVector[]>;
  /** Rises with every purge of the account's entries, so other instances drop what they hold in memory. */
  generation(accountId: string): Promise<number>;
  /** Drops the scope's entries (an account's scope: its sub-accounts' too); answers how many entries went. */
  purge(accountId: string, subAccountId: string | null): Promise<number>;
  sweep(now: number): Promise<void>;
  close(): Promise<void>;
}

export function vectorBytes(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

export function vectorOf(bytes: Buffer): Float32Array {
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}
