import { describe, expect, it } from 'vitest';
import { bitBound, ScopeIndex, signatureOf, unit } from '../../src/cache/vector-index.ts';

/** A deterministic pseudo-random generator, so the test sees the same vectors every run. */
function random(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296 - 0.5;
  };
}

const vectorOf = (next: () => number, dims: number) => unit(Array.from({ length: dims }, next));
const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, v, i) => sum + v * (b[i] as number), 0);

describe('the in-process vector index', () => {
  it('finds exactly what a brute-force scan finds, near copies at every distance around the threshold', () => {
    const next = random(7);
    const dims = 96;
    const stored = Array.from({ length: 2000 }, () => vectorOf(next, dims));
    const index = new ScopeIndex();
    index.add(
      stored.map((vector, i) => ({
        seq: i + 1,
        group: 'g',
        key: `k${i}`,
        vector,
        ...(i % 2 === 0 && { signs: signatureOf(vector) }),
        expiresAtMs: Number.MAX_SAFE_INTEGER,
      })),
    );
    let compared = 0;
    for (let q = 0; q < 300; q++) {
      const base = stored[q * 6] as Float32Array;
      const noise = vectorOf(next, dims);
      const query = unit(base.map((v, i) => v + (0.05 + (q % 10) * 0.04) * (noise[i] as number)));
      for (const threshold of [0.95, 0.9]) {
        const expected = stored
          .map((v, i) => ({ key: `k${i}`, similarity: dot(v, query) }))
          .filter((f) => f.similarity >= threshold)
          .map((f) => f.key)
          .sort();
        const found = index.search('g', query, threshold).map((f) => f.key);
        expect([...found].sort()).toEqual(expected);
        compared += expected.length;
      }
    }
    expect(compared).toBeGreaterThan(100);
  });

  it('keeps groups, dimensions and expiry apart, and answers the best first', () => {
    const next = random(11);
    const a = vectorOf(next, 32);
    const index = new ScopeIndex();
    const near = unit(a.map((v) => v + 0.01));
    index.add([
      { seq: 1, group: 'g', key: 'exact', vector: a, expiresAtMs: Number.MAX_SAFE_INTEGER },
      { seq: 2, group: 'g', key: 'near', vector: near, expiresAtMs: Number.MAX_SAFE_INTEGER },
      { seq: 3, group: 'g', key: 'expired', vector: a, expiresAtMs: 1 },
      { seq: 4, group: 'other', key: 'other', vector: a, expiresAtMs: Number.MAX_SAFE_INTEGER },
    ]);
    expect(index.search('g', a, 0.95).map((f) => f.key)).toEqual(['exact', 'near']);
    expect(index.search('g', vectorOf(next, 16), 0.5)).toEqual([]);
    expect(index.seq).toBe(4);
  });

  it('allows more differing sign bits the lower the threshold', () => {
    expect(bitBound(1)).toBe(0);
    expect(bitBound(0.95)).toBeLessThan(bitBound(0.8));
    expect(bitBound(-1)).toBe(64);
  });
});
