import type { StoredVector } from './entry.ts';

const INITIAL_ROWS = 64;
/** Sign bits per vector: random hyperplanes, two 32-bit words. */
const BITS = 64;

/** A deterministic pseudo-random unit vector (xorshift), the same in every process. */
function hyperplane(dimensions: number, seed: number): Float32Array {
  let x = (seed * 2654435761) >>> 0 || 1;
  const values = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    values[i] = (x >>> 0) / 4294967296 - 0.5;
  }
  return values;
}

const planesByDimensions = new Map<number, Float32Array[]>();

/**
 * A vector's sign bits against the shared random hyperplanes: computed once, when the entry is stored, and kept
 * beside it, so that an instance loading a tenant's index does not redo 64 dot products per entry.
 */
export function signatureOf(vector: Float32Array): [number, number] {
  const dims = vector.length;
  let planes = planesByDimensions.get(dims);
  if (!planes) {
    planes = Array.from({ length: BITS }, (_, bit) => hyperplane(dims, bit + 1));
    planesByDimensions.set(dims, planes);
  }
  const words = [0, 0];
  for (let bit = 0; bit < BITS; bit++) {
    const plane = planes[bit] as Float32Array;
    let dot = 0;
    for (let i = 0; i < dims; i++) dot += (plane[i] as number) * (vector[i] as number);
    if (dot >= 0) words[bit >> 5] = ((words[bit >> 5] as number) | (1 << (bit & 31))) >>> 0;
  }
  return words as [number, number];
}

function popcount(n: number): number {
  let v = n - ((n >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/**
 * The most sign bits two vectors at the threshold's angle may disagree on and still be scanned. Each bit differs
 * with probability angle / π (random hyperplanes); allowing the mean plus five standard deviations loses a match at
 * the threshold about once in a million lookups, and one more similar than the threshold less often still.
 */
export function bitBound(threshold: number): number {
  const p = Math.acos(Math.max(-1, Math.min(1, threshold))) / Math.PI;
  return Math.min(BITS, Math.ceil(BITS * p + 5 * Math.sqrt(BITS * p * (1 - p))));
}

/** One group's vectors (requests that differ only in their user message), unit length, packed in one array. */
class Group {
  dims = 0;
  rows = 0;
  data = new Float32Array(0);
  signs = new Uint32Array(0);
  keys: string[] = [];
  expires: number[] = [];
  add(key: string, vector: Float32Array, expiresAtMs: number, signs?: [number, number]): void {
    if (this.dims === 0) this.dims = vector.length;
    if (vector.length !== this.dims) return; // another embedding model's vector: it cannot be compared
    if ((this.rows + 1) * this.dims > this.data.length) {
      const capacity = Math.max(INITIAL_ROWS, this.rows * 2);
      const grown = new Float32Array(capacity * this.dims);
      grown.set(this.data.subarray(0, this.rows * this.dims));
      this.data = grown;
      const signs = new Uint32Array(capacity * 2);
      signs.set(this.signs.subarray(0, this.rows * 2));
      this.signs = signs;
    }
    this.data.set(vector, this.rows * this.dims);
    const [low, high] = signs ?? signatureOf(vector);
    this.signs[this.rows * 2] = low;
    this.signs[this.rows * 2 + 1] = high;
    this.keys.push(key);
    this.expires.push(expiresAtMs);
    this.rows += 1;
  }

  /**
   * Rows at or above the threshold, best first. The sign bits pass over the rows that cannot be near (a few
   * integer operations each); the rest are scored exactly, so what is returned is the true cosine similarity.
   */
  search(query: Float32Array, threshold: number, now: number): { key: string; similarity: number }[] {
    if (query.length !== this.dims || this.rows === 0) return [];
    const [low, high] = signatureOf(query);
    const bound = bitBound(threshold);
    const found: { key: string; similarity: number }[] = [];
    const { data, dims, signs } = this;
    for (let row = 0; row < this.rows; row++) {
      const differ =
        popcount(((signs[row * 2] as number) ^ low) >>> 0) +
        popcount(((signs[row * 2 + 1] as number) ^ high) >>> 0);
      if (differ > bound) continue;
      let dot = 0;
      const base = row * dims;
      for (let i = 0; i < dims; i++) dot += (data[base + i] as number) * (query[i] as number);
      if (dot >= threshold && (this.expires[row] as number) > now)
        found.push({ key: this.keys[row] as string, similarity: dot });
    }
    return found.sort((a, b) => b.similarity - a.similarity);
  }
}

/** A vector scaled to unit length, so that a dot product is the cosine similarity. */
export function unit(vector: readonly number[] | Float32Array): Float32Array {
  let norm = 0;
  for (const v of vector) norm += v * v;
  norm = Math.sqrt(norm);
  const out = new Float32Array(vector.length);
  if (norm === 0) return out;
  for (let i = 0; i < vector.length; i++) out[i] = (vector[i] as number) / norm;
  return out;
}

/**
 * One tenant's semantic entries in this process, read from the shared store as they arrive (by sequence) and
 * thrown away when the account's purge generation moves. Lookups scan only this tenant's group of the request,
 * so nothing another tenant stored changes what or how fast a tenant finds.
 */
export class ScopeIndex {
  seq = 0;
  generation = -1;
  private groups = new Map<string, Group>();

  reset(generation: number): void {
    this.seq = 0;
    this.generation = generation;
    this.groups = new Map();
  }

  add(vectors: StoredVector[]): void {
    for (const v of vectors) {
      let group = this.groups.get(v.group);
      if (!group) {
        group = new Group();
        this.groups.set(v.group, group);
      }
      group.add(v.key, v.vector, v.expiresAtMs, v.signs);
      if (v.seq > this.seq) this.seq = v.seq;
    }
  }

  search(group: string, query: Float32Array, threshold: number, now = Date.now()) {
    return this.groups.get(group)?.search(query, threshold, now) ?? [];
  }
}
