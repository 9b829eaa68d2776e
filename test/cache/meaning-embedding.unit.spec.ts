import { describe, expect, it } from 'vitest';
import { cosine, meaningVector, meaningWords } from '../upstreams/meaning-embedding.ts';

const similarity = (a: string, b: string) => cosine(meaningVector(a), meaningVector(b));

describe('the simulators’ meaning embedding model', () => {
  it('reads only meaning-bearing words', () => {
    expect(meaningWords('What is the capital of France?')).toEqual(['capital', 'france']);
    expect(meaningWords("Tell me France's capital, please.")).toEqual(['france', 'capital']);
    expect(meaningWords("Paris isn't the capital")).toEqual(['pari', 'not', 'capital']);
  });

  it('makes a paraphrase similar at 0.95 and a negation or another entity dissimilar', () => {
    expect(similarity('What is the capital of France?', "Tell me France's capital, please.")).toBeGreaterThan(
      0.999,
    );
    expect(similarity('What is the capital of France?', 'What is the capital of Germany?')).toBeLessThan(0.7);
    expect(similarity('Is Paris the capital of France?', 'Is Paris not the capital of France?')).toBeLessThan(
      0.7,
    );
    expect(similarity('How do I bake bread?', 'What is the capital of France?')).toBeLessThan(0.3);
  });

  it('answers unit vectors of the asked dimensions', () => {
    const v = meaningVector('bread', 64);
    expect(v).toHaveLength(64);
    expect(cosine(v, v)).toBeCloseTo(1, 9);
  });
});
