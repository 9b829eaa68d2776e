import type { StoredVector } from './entry.ts';

const INITIAL_ROWS = 64;

/** One group's vectors (requests that differ only in their user message), unit length, packed in one array. */
class Group {
  dims = 0;
  rows = 0;
  data = new Float32Array(0);
  keys: string[] = [];
  expires: number[] = [];

  add(key: string, vector: Float32Array, expiresAtMs: number): void {
    if (this.dims === 0) this.dims = vector.length;
    if (vector.length !== this.dims) return; // another embedding model's vector: it cannot be compared
    if ((this.rows + 1) * this.dims > this.data.length) {
      const grown = new Float32Array(Math.max(INITIAL_ROWS, this.rows * 2) * this.dims);
      grown.set(this.data.subarray(0, this.rows * this.dims));
      this.data = grown;
    }
    this.data.set(vector, this.rows * this.dims);
    this.keys.push(key);
    this.expires.push(expiresAtMs);
    this.rows += 1;
  }

  /** Rows by similarity, best first, down to the threshold (a brute-force scan: exact, no recall lost). */
  search(query: Float32Array, threshold: number, now: number): { key: string; similarity: number }[] {
    if (query.length !== this.dims) return [];
    const found: { key: string; similarity: number }[] = [];
    const { data, dims } = this;
    for (let row = 0; row < this.rows; row++) {
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
      group.add(v.key, v.vector, v.expiresAtMs);
      if (v.seq > this.seq) this.seq = v.seq;
    }
  }

  search(group: string, query: Float32Array, threshold: number, now = Date.now()) {
    return this.groups.get(group)?.search(query, threshold, now) ?? [];
  }
}
