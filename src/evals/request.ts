import { z } from 'zod';

/** The limits a request is held to, named in its refusals. */
export const EVAL_LIMITS = {
  minCandidates: 2,
  maxCandidates: 20,
  minItems: 1,
  maxItems: 1000,
  maxCriteria: 10,
  /** The dataset as JSON: it is kept in the eval's first event. */
  maxDatasetBytes: 4 * 1024 * 1024,
} as const;

const Template = z.string().min(1).max(20_000);

const Message = z
  .object({
    role: z.enum(['system', 'developer', 'user', 'assistant']),
    content: z.union([z.string(), z.array(z.record(z.string(), z.unknown()))]),
  })
  .loose();

const StringCheck = z.object({
  type: z.literal('string_check'),
  name: z.string().min(1).max(200),
  input: Template,
  reference: Template,
  operation: z.enum(['eq', 'ne', 'like', 'ilike']),
});

export const SIMILARITY_METRICS = ['fuzzy_match', 'bleu', 'rouge_1', 'rouge_2', 'rouge_l'] as const;

const TextSimilarity = z.object({
  type: z.literal('text_similarity'),
  name: z.string().min(1).max(200),
  input: Template,
  reference: Template,
  evaluation_metric: z.enum(SIMILARITY_METRICS),
  pass_threshold: z.number().min(0).max(1),
});

const ScoreModel = z.object({
  type: z.literal('score_model'),
  name: z.string().min(1).max(200),
  model: z.string().min(1).max(200),
  input: z
    .array(z.object({ role: z.enum(['system', 'developer', 'user', 'assistant']), content: Template }))
    .min(1)
    .max(20),
  range: z.tuple([z.number(), z.number()]).optional(),
  pass_threshold: z.number().optional(),
});

export const TestingCriterion = z.discriminatedUnion('type', [StringCheck, TextSimilarity, ScoreModel]);
export type TestingCriterion = z.infer<typeof TestingCriterion>;

export const CreateEvalRequest = z.object({
  name: z.string().min(1).max(256),
  candidate_models: z
    .array(z.string().min(1).max(200))
    .min(
      EVAL_LIMITS.minCandidates,
      `give ${EVAL_LIMITS.minCandidates} to ${EVAL_LIMITS.maxCandidates} models`,
    )
    .max(
      EVAL_LIMITS.maxCandidates,
      `give ${EVAL_LIMITS.minCandidates} to ${EVAL_LIMITS.maxCandidates} models`,
    ),
  dataset: z
    .array(
      z.object({
        input: z.union([z.string().min(1), z.array(Message).min(1)]),
        expected: z.string().optional(),
      }),
    )
    .min(EVAL_LIMITS.minItems, `give ${EVAL_LIMITS.minItems} to ${EVAL_LIMITS.maxItems} items`)
    .max(EVAL_LIMITS.maxItems, `give ${EVAL_LIMITS.minItems} to ${EVAL_LIMITS.maxItems} items`),
  metric: z.enum(['quality', 'cost', 'speed']),
  testing_criteria: z.array(TestingCriterion).min(1).max(EVAL_LIMITS.maxCriteria).optional(),
  /** The output limit of every candidate call; the model's own limit when absent. */
  max_tokens: z.number().int().positive().max(1_000_000).optional(),
});
export type CreateEvalRequest = z.infer<typeof CreateEvalRequest>;

/** The variables a grader's template may name. */
export const TEMPLATE_VARIABLES = ['item.input', 'item.expected', 'sample.output_text'] as const;
const VARIABLE = /\{\{\s*([\w.]+)\s*\}\}/g;

/** Fills `{{item.input}}`, `{{item.expected}}` and `{{sample.output_text}}`. */
export function fillTemplate(template: string, values: Record<(typeof TEMPLATE_VARIABLES)[number], string>) {
  return template.replace(VARIABLE, (whole, name: string) =>
    Object.hasOwn(values, name) ? values[name as keyof typeof values] : whole,
  );
}

/** The variables a template names that no item or sample has. */
export function unknownVariables(template: string): string[] {
  return [...template.matchAll(VARIABLE)]
    .map((match) => match[1] as string)
    .filter((name) => !(TEMPLATE_VARIABLES as readonly string[]).includes(name));
}
