import { describe, expect, it } from 'vitest';
import { pairwiseDelta, readVerdict, similarityDelta } from './judge.ts';

describe('replay scoring', () => {
  it('reads a verdict from the first words of the judge’s reply, else none', () => {
    expect(readVerdict('A')).toBe('A');
    expect(readVerdict(' b.')).toBe('B');
    expect(readVerdict('Tie')).toBe('TIE');
    expect(readVerdict('I cannot decide')).toBeUndefined();
  });

  it('asks in both orders: agreement wins or loses, a contradiction is a tie, a tie or no verdict is half', () => {
    expect(pairwiseDelta('B', 'A')).toBe(1);
    expect(pairwiseDelta('A', 'B')).toBe(-1);
    expect(pairwiseDelta('A', 'A')).toBe(0); // position bias: each order picked the first answer
    expect(pairwiseDelta('B', 'TIE')).toBe(0.5);
    expect(pairwiseDelta(undefined, 'B')).toBe(-0.5);
  });

  it('scores without a judge by word similarity to the source: 0 when equal, −1 when nothing is shared', () => {
    expect(similarityDelta('The cat sat', 'the cat SAT')).toBe(0);
    expect(similarityDelta('alpha beta', 'gamma delta')).toBe(-1);
    expect(similarityDelta('a b c d', 'a b')).toBeCloseTo(-0.5, 9);
    expect(similarityDelta('', '')).toBe(0);
  });
});
