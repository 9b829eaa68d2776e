import { describe, expect, it } from 'vitest';
import type { ItemResult } from '../../commands/eval/decide.ts';
import { normal, overlap, percentile, scoreInterval, verdict, wilson } from './stats.ts';

const results = (model: string, scores: (number | null)[], cost: bigint, latency: number): ItemResult[] =>
  scores.map((score, item) => ({
    item,
    model,
    score,
    costNanos: cost,
    judgeCostNanos: 0n,
    latencyMs: latency + (item % 3),
    failed: false,
  }));

describe('eval statistics', () => {
  it('Wilson intervals: sound at n/n and 0/n, the textbook figures in between', () => {
    const all = wilson(20, 20);
    expect(all.high).toBe(1);
    expect(all.low).toBeCloseTo(0.8389, 3);
    const none = wilson(0, 20);
    expect(none.low).toBe(0);
    expect(none.high).toBeCloseTo(0.1611, 3);
    const half = wilson(10, 20);
    expect(half.low).toBeCloseTo(0.2993, 3);
    expect(half.high).toBeCloseTo(0.7007, 3);
  });

  it('normal intervals of a mean, percentiles by nearest rank, pass/fail scores take Wilson', () => {
    const i = normal([1, 2, 3, 4, 5]);
    expect(i.mean).toBe(3);
    expect(i.high - i.mean).toBeCloseTo((1.959964 * Math.sqrt(2.5)) / Math.sqrt(5), 9);
    expect(normal([7])).toEqual({ mean: 7, low: 7, high: 7 });
    expect(percentile([5, 1, 4, 2, 3], 50)).toBe(3);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 100], 95)).toBe(19);
    expect(percentile([], 50)).toBeNull();
    expect(scoreInterval([1, 0, 1]).kind).toBe('wilson');
    expect(scoreInterval([1, 0.5, 1]).kind).toBe('normal');
    expect(overlap({ mean: 0, low: 0, high: 0.5 }, { mean: 1, low: 0.5, high: 1 })).toBe(true);
    expect(overlap({ mean: 0, low: 0, high: 0.4 }, { mean: 1, low: 0.5, high: 1 })).toBe(false);
  });

  const twenty = (v: number | null) => Array.from({ length: 20 }, () => v);
  const order = ['a/dear', 'b/cheap', 'c/wrong'];
  const runs = new Map([
    ['a/dear', results('a/dear', twenty(1), 100n, 10)],
    ['b/cheap', results('b/cheap', twenty(1), 10n, 200)],
    ['c/wrong', results('c/wrong', twenty(0), 1n, 5)],
  ]);

  it('quality: a tie within the intervals goes to the cheaper, named with the tied', () => {
    const v = verdict('quality', order, runs);
    expect(v).toMatchObject({ winner: 'b/cheap', tie: true, tied: ['a/dear', 'b/cheap'] });
    expect(v.candidates.map((c) => c.eligible)).toEqual([true, true, false]);
  });

  it('cost and speed: only candidates tied with the best quality and without errors may win', () => {
    expect(verdict('cost', order, runs)).toMatchObject({ winner: 'b/cheap', tie: false });
    expect(verdict('speed', order, runs)).toMatchObject({ winner: 'a/dear', tie: false });
    const failing = new Map(runs);
    failing.set(
      'a/dear',
      (runs.get('a/dear') as ItemResult[]).map((r, i) => (i === 0 ? { ...r, failed: true, score: null } : r)),
    );
    // One failed call: not every item answered, so the dearer model cannot win on speed any more.
    expect(verdict('speed', order, failing).winner).toBe('b/cheap');
  });

  it('nothing graded: quality cannot tell candidates apart, all tie, the cheapest wins', () => {
    const ungraded = new Map([
      ['a/dear', results('a/dear', twenty(null), 100n, 10)],
      ['b/cheap', results('b/cheap', twenty(null), 10n, 200)],
    ]);
    expect(verdict('quality', ['a/dear', 'b/cheap'], ungraded)).toMatchObject({
      winner: 'b/cheap',
      tie: true,
      reason: expect.stringContaining('no answer could be graded'),
    });
  });
});
