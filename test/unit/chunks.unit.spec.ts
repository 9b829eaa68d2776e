import { describe, expect, it } from 'vitest';
import { chunks } from '../../src/projections/chunks.ts';

describe('chunks', () => {
  it('groups what has already arrived, bounded by the maximum, losing and repeating nothing', async () => {
    async function* source() {
      for (let i = 0; i < 10; i++) yield i;
      await new Promise((r) => setTimeout(r, 20));
      for (let i = 10; i < 13; i++) yield i;
    }
    const runs: number[][] = [];
    for await (const run of chunks(source(), 4)) runs.push(run);
    expect(runs.flat()).toEqual(Array.from({ length: 13 }, (_, i) => i));
    expect(Math.max(...runs.map((r) => r.length))).toBeLessThanOrEqual(4);
  });

  it('passes on a failure of the source after what came before it', async () => {
    async function* failing() {
      yield 1;
      throw new Error('boom');
    }
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const run of chunks(failing(), 10)) seen.push(...run);
      })(),
    ).rejects.toThrow('boom');
    expect(seen).toEqual([1]);
  });
});
