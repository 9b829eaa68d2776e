import { describe, expect, it } from 'vitest';
import { type AskModel, grade, normalise, readScore, stringCheck } from './grade.ts';
import { bleu, fuzzyMatch, rougeL, rougeN } from './similarity.ts';

const never: AskModel = async () => {
  throw new Error('no grading model should be asked');
};

describe('eval grading', () => {
  it('normalises case, whitespace and punctuation; contains only for longer answers', () => {
    expect(normalise('  Paris!\n ')).toBe('paris');
    expect(stringCheck('PARIS.', 'paris')).toBe('exact');
    expect(stringCheck('The capital is Paris, of course.', 'Paris')).toBe('contains');
    expect(stringCheck('Parisian', 'Paris')).toBeUndefined();
    expect(stringCheck('Lyon', 'Paris')).toBeUndefined();
  });

  it('reads the first number of a reply, scaled from its range', () => {
    expect(readScore('0.8')).toBe(0.8);
    expect(readScore('Score: 7', [0, 10])).toBe(0.7);
    expect(readScore('2')).toBe(1);
    expect(readScore('no idea')).toBeUndefined();
  });

  it('a passing string check needs no judge; a failing one asks it and records model, prompt and cost', async () => {
    const item = { input: 'What is the capital of France?', expected: 'Paris' };
    expect(
      await grade(item, 'Paris', { judgeModel: 'j/m', criteria: null, ask: never, requestId: 'r' }),
    ).toEqual({ score: 1, grader: 'exact', judge: null });
    const asked: string[] = [];
    const judged = await grade(item, 'Lyon', {
      judgeModel: 'j/m',
      criteria: null,
      requestId: 'r',
      ask: async (model, messages, requestId) => {
        asked.push(`${model} ${requestId}`);
        expect(JSON.stringify(messages)).toContain('Reference answer:\\nParis');
        return { text: '0.1', costNanos: 42n };
      },
    });
    expect(asked).toEqual(['j/m r-judge']);
    expect(judged).toMatchObject({ score: 0.1, grader: 'judge', judge: { model: 'j/m', costNanos: 42n } });
    expect(judged.judge?.prompt).toContain('Answer to grade:\nLyon');
    expect(
      await grade(item, 'Lyon', { judgeModel: null, criteria: null, ask: never, requestId: 'r' }),
    ).toEqual({
      score: 0,
      grader: 'string_check',
      judge: null,
    });
    expect(
      await grade({ input: 'hi', expected: null }, 'hello', {
        judgeModel: null,
        criteria: null,
        ask: never,
        requestId: 'r',
      }),
    ).toEqual({ score: null, grader: 'none', judge: null });
  });

  it('testing criteria: the share passed of string_check, text_similarity and score_model', async () => {
    const graded = await grade({ input: 'Say hi', expected: 'hello there' }, 'hello there friend', {
      judgeModel: null,
      requestId: 'r',
      ask: async (_model, messages) => {
        expect(messages[0]?.content).toBe('Rate: hello there friend');
        return { text: '4', costNanos: 5n };
      },
      criteria: [
        {
          type: 'string_check',
          name: 'eq',
          input: '{{sample.output_text}}',
          reference: '{{item.expected}}',
          operation: 'eq',
        },
        {
          type: 'string_check',
          name: 'like',
          input: '{{sample.output_text}}',
          reference: 'hello',
          operation: 'like',
        },
        {
          type: 'text_similarity',
          name: 'fuzzy',
          input: '{{sample.output_text}}',
          reference: '{{item.expected}}',
          evaluation_metric: 'fuzzy_match',
          pass_threshold: 0.7,
        },
        {
          type: 'score_model',
          name: 'rater',
          model: 'j/m',
          input: [{ role: 'user', content: 'Rate: {{sample.output_text}}' }],
          range: [1, 5],
          pass_threshold: 4,
        },
      ],
    });
    expect(graded).toMatchObject({
      score: 0.75,
      grader: 'testing_criteria',
      judge: { model: 'j/m', costNanos: 5n },
    });
  });

  it('similarities: 1 for the same text, 0 for nothing shared', () => {
    expect(fuzzyMatch('abc', 'abc')).toBe(1);
    expect(fuzzyMatch('abcd', 'abxd')).toBeCloseTo(0.75, 9);
    expect(rougeN('the cat sat', 'the cat sat', 1)).toBe(1);
    expect(rougeN('a b', 'c d', 1)).toBe(0);
    expect(rougeL('the cat sat on the mat', 'the cat on the mat')).toBeCloseTo((2 * 5) / 11, 9);
    expect(bleu('the cat sat on the mat', 'the cat sat on the mat')).toBeCloseTo(1, 9);
    expect(bleu('dog', 'the cat sat on the mat')).toBe(0);
  });
});
