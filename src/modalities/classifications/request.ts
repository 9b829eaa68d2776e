import { z } from 'zod';
import type { TaskUsage } from '../chat-task.ts';

export const MAX_CLASSIFICATION_INPUTS = 100;
export const MAX_LABELS = 50;
export const MAX_QUESTIONS = 50;
/** Labels used when a classification request gives none: sentiment, the most common text classification. */
export const DEFAULT_LABELS = ['positive', 'negative', 'neutral'];

const Question = z.object({
  id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, _ or -'),
  question: z.string().min(1, 'must not be empty'),
  type: z.enum(['boolean', 'number', 'enum', 'text']),
  options: z.array(z.string().min(1, 'must not be empty')).min(2).max(MAX_LABELS).optional(),
});
export type Question = z.infer<typeof Question>;

const unique = (values: readonly string[]) => new Set(values).size === values.length;

/**
 * One body, two modes. Labels per input: `input` (and optionally `labels`). An evaluation: `state` and `questions`.
 * The mode is chosen by the fields present; mixing them is refused.
 */
export const ClassificationRequest = z
  .object({
    model: z.string().min(1).optional(),
    input: z
      .union([
        z.string().min(1, 'must not be empty'),
        z.array(z.string().min(1, 'must not be empty')).min(1).max(MAX_CLASSIFICATION_INPUTS),
      ])
      .optional(),
    labels: z.array(z.string().min(1, 'must not be empty')).min(2).max(MAX_LABELS).optional(),
    state: z.union([z.string().min(1, 'must not be empty'), z.record(z.string(), z.unknown())]).optional(),
    questions: z.array(Question).min(1).max(MAX_QUESTIONS).optional(),
  })
  .loose()
  .superRefine((body, ctx) => {
    const evaluation = body.state !== undefined || body.questions !== undefined;
    if (!evaluation) {
      if (body.input === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['input'],
          message: "required (or 'state' and 'questions' for an evaluation)",
        });
      }
      if (body.labels && !unique(body.labels)) {
        ctx.addIssue({ code: 'custom', path: ['labels'], message: 'must not repeat a label' });
      }
      return;
    }
    for (const field of ['input', 'labels'] as const) {
      if (body[field] !== undefined) {
        ctx.addIssue({ code: 'custom', path: [field], message: "not taken with 'state' and 'questions'" });
      }
    }
    if (body.state === undefined) ctx.addIssue({ code: 'custom', path: ['state'], message: 'required' });
    if (body.questions === undefined) {
      ctx.addIssue({ code: 'custom', path: ['questions'], message: 'required' });
      return;
    }
    if (!unique(body.questions.map((q) => q.id))) {
      ctx.addIssue({ code: 'custom', path: ['questions'], message: 'must not repeat an id' });
    }
    for (const [index, question] of body.questions.entries()) {
      if (question.type === 'enum' && question.options === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['questions', index, 'options'],
          message: 'required for an enum',
        });
      }
      if (question.type !== 'enum' && question.options !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['questions', index, 'options'],
          message: 'only for an enum question',
        });
      }
      if (question.options && !unique(question.options)) {
        ctx.addIssue({
          code: 'custom',
          path: ['questions', index, 'options'],
          message: 'must not repeat an option',
        });
      }
    }
  });
export type ClassificationRequest = z.infer<typeof ClassificationRequest>;

export interface ClassificationResponse {
  object: 'list';
  model: string;
  /** One per input, in input order. */
  data: { index: number; label: string; score: number }[];
  usage: TaskUsage;
}

export type Answer = boolean | number | string;

export interface EvaluationResponse {
  object: 'evaluation';
  model: string;
  /** One per question, in question order. */
  answers: { id: string; type: Question['type']; answer: Answer }[];
  usage: TaskUsage;
}
