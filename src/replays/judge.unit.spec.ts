import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../catalog/index.ts';
import type { ChatDeps } from '../chat/complete.ts';
import { gradingSampling, judgeModel, pairwiseDelta, readVerdict, similarityDelta } from './judge.ts';

const priced = (id: string, output: number) => ({
  id,
  match: { equals: id },
  prices: { input_mtok: 1, output_mtok: output },
});
const catalog = buildCatalog({
  providers: [
    {
      id: 'openai',
      name: 'OpenAI',
      api_pattern: 'https://api.openai.com',
      models: [priced('o1-pro', 600), priced('gpt-5', 10), priced('gpt-4.1', 8), priced('gpt-4o-mini', 0.6)],
    },
  ],
});
const deps = (env: Record<string, string>) =>
  ({ catalog, env: { OPENAI_API_KEY: 'sk', ...env }, timeoutMs: 1000 }) as unknown as ChatDeps;

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

  it('judges by default with the dearest reachable model that takes sampling parameters', () => {
    expect(judgeModel(deps({}))).toBe('openai/gpt-4.1');
    expect(judgeModel(deps({ GATEWAY_JUDGE_MODEL: 'openai/o1-pro' }))).toBe('openai/o1-pro');
    expect(judgeModel(deps({ GATEWAY_JUDGE_MODEL: 'off' }))).toBeUndefined();
  });

  it('sends temperature 0 to a grading model, and nothing to one that refuses sampling parameters', () => {
    expect(gradingSampling(deps({}), 'openai/gpt-4.1')).toEqual({ temperature: 0 });
    expect(gradingSampling(deps({}), 'openai/o1-pro')).toEqual({});
    expect(gradingSampling(deps({}), 'gpt-5')).toEqual({});
  });
});
