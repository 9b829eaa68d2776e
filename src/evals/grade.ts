import type { z } from 'zod';
import type { EvalItem } from '../../events/eval.ts';
import { fillTemplate, type TestingCriterion } from './request.ts';
import { similarity } from './similarity.ts';

type Item = z.infer<typeof EvalItem>;

export interface ChatMessage {
  role: string;
  content: unknown;
}

/** A grading model's reply and what it was charged. */
export interface Asked {
  text: string;
  costNanos: bigint;
}

/** Asks a grading model (the judge, a score_model grader); the caller bills and logs the call. */
export type AskModel = (model: string, messages: ChatMessage[], requestId: string) => Promise<Asked>;

export type Grader = 'exact' | 'contains' | 'judge' | 'string_check' | 'testing_criteria' | 'none';

export interface Graded {
  score: number | null;
  grader: Grader;
  judge: { model: string; prompt: string; costNanos: bigint } | null;
  /** A grading call that failed: the score fell back, and the worker decides whether the run goes on. */
  failure?: unknown;
}

export const EVAL_JUDGE_SYSTEM =
  'You grade an answer to a request on a scale from 0 to 1. Reply with the number alone: 1 for a fully ' +
  'correct answer, 0 for a wrong one, a value in between for a partly correct one.';

/** The longest the judge sees of each text, so that one long answer cannot make its hold unbounded. */
const MAX_CHARS = 8_000;
const clip = (text: string) => (text.length > MAX_CHARS ? `${text.slice(0, MAX_CHARS)}…` : text);

/** Case, whitespace and punctuation do not make an answer different. */
export function normalise(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\p{P}\p{S}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Exact after normalising; for an answer longer than the expected one, the expected words in it, in order. */
export function stringCheck(output: string, expected: string): 'exact' | 'contains' | undefined {
  const a = normalise(output);
  const b = normalise(expected);
  if (a === b) return 'exact';
  if (b !== '' && a.length > b.length && ` ${a} `.includes(` ${b} `)) return 'contains';
  return undefined;
}

/** The request as text: the input string, or each message as `role: content`. */
export function askedText(input: Item['input']): string {
  if (typeof input === 'string') return input;
  return input
    .map((m) => `${String(m.role)}: ${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`)
    .join('\n');
}

export function judgePrompt(asked: string, expected: string | null, output: string): string {
  const reference = expected === null ? '' : `Reference answer:\n${clip(expected)}\n\n`;
  return `Request:\n${clip(asked)}\n\n${reference}Answer to grade:\n${clip(output)}`;
}

/** The first number of a reply, within 0..1 after scaling from `range`; undefined when there is none. */
export function readScore(reply: string, range: [number, number] = [0, 1]): number | undefined {
  const found = /-?\d+(?:\.\d+)?/.exec(reply.slice(0, 100));
  if (!found) return undefined;
  const [low, high] = range;
  const scaled = (Number(found[0]) - low) / (high - low);
  return Math.min(1, Math.max(0, scaled));
}

export interface GradeOptions {
  judgeModel: string | null;
  criteria: TestingCriterion[] | null;
  ask: AskModel;
  /** The candidate call's request id: grading calls are logged and charged under ids made from it. */
  requestId: string;
}

/**
 * Scores one answer 0..1. With testing criteria, the share of them it passes. Otherwise, with an expected
 * answer: 1 when the string check passes (exact, or contains), else the judge's grade against the expected
 * answer, else 0; without one: the judge's grade of the answer to the request, else ungraded (null).
 */
export async function grade(item: Item, output: string, options: GradeOptions): Promise<Graded> {
  if (options.criteria) return byCriteria(item, output, options.criteria, options);
  if (item.expected !== null) {
    const check = stringCheck(output, item.expected);
    if (check) return { score: 1, grader: check, judge: null };
  }
  const fallback: Graded =
    item.expected === null
      ? { score: null, grader: 'none', judge: null }
      : { score: 0, grader: 'string_check', judge: null };
  const model = options.judgeModel;
  if (!model) return fallback;
  const user = judgePrompt(askedText(item.input), item.expected, output);
  const prompt = `${EVAL_JUDGE_SYSTEM}\n\n${user}`;
  try {
    const asked = await options.ask(
      model,
      [
        { role: 'system', content: EVAL_JUDGE_SYSTEM },
        { role: 'user', content: user },
      ],
      `${options.requestId}-judge`,
    );
    const judge = { model, prompt, costNanos: asked.costNanos };
    const score = readScore(asked.text);
    // A reply with no number is no grade: the string check's stands, and what the judge cost is recorded.
    return score === undefined ? { ...fallback, judge } : { score, grader: 'judge', judge };
  } catch (failure) {
    return { ...fallback, failure };
  }
}

async function byCriteria(
  item: Item,
  output: string,
  criteria: TestingCriterion[],
  options: GradeOptions,
): Promise<Graded> {
  const values = {
    'item.input': askedText(item.input),
    'item.expected': item.expected ?? '',
    'sample.output_text': output,
  };
  let passed = 0;
  let judge = null as Graded['judge'];
  for (const [k, criterion] of criteria.entries()) {
    switch (criterion.type) {
      case 'string_check': {
        const input = fillTemplate(criterion.input, values);
        const reference = fillTemplate(criterion.reference, values);
        const ok = {
          eq: input === reference,
          ne: input !== reference,
          like: input.includes(reference),
          ilike: input.toLowerCase().includes(reference.toLowerCase()),
        }[criterion.operation];
        if (ok) passed += 1;
        break;
      }
      case 'text_similarity': {
        const input = fillTemplate(criterion.input, values);
        const reference = fillTemplate(criterion.reference, values);
        if (similarity(criterion.evaluation_metric, input, reference) >= criterion.pass_threshold)
          passed += 1;
        break;
      }
      case 'score_model': {
        const messages = criterion.input.map((m) => ({
          role: m.role,
          content: fillTemplate(m.content, values),
        }));
        const range = criterion.range ?? [0, 1];
        const threshold = criterion.pass_threshold ?? (range[0] + range[1]) / 2;
        try {
          const asked = await options.ask(criterion.model, messages, `${options.requestId}-grader${k}`);
          judge = {
            model: judge?.model ?? criterion.model,
            prompt: judge?.prompt ?? messages.map((m) => `${m.role}: ${m.content}`).join('\n\n'),
            costNanos: (judge?.costNanos ?? 0n) + asked.costNanos,
          };
          const score = readScore(asked.text, range);
          if (score !== undefined && score * (range[1] - range[0]) + range[0] >= threshold) passed += 1;
        } catch (failure) {
          return { score: passed / criteria.length, grader: 'testing_criteria', judge, failure };
        }
        break;
      }
    }
  }
  return { score: passed / criteria.length, grader: 'testing_criteria', judge };
}
