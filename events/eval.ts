import { z } from 'zod';
import { Nanos } from './money.ts';

/**
 * Events of the `eval-{evalId}` stream: a dataset run against several candidate models, each answer scored, and
 * the run's winner. A rerun is a new run of the same eval (`run` counts from 1); the eval's alias follows the
 * newest completed one.
 */

export const EvalMetric = z.enum(['quality', 'cost', 'speed']);

/** One user message, or a whole chat messages array. */
export const EvalInput = z.union([z.string(), z.array(z.record(z.string(), z.unknown()))]);

export const EvalItem = z.object({ input: EvalInput, expected: z.string().nullable() });

export const EvalRunError = z.object({ message: z.string(), type: z.string(), code: z.number().int() });

export const EvalCreated = z.object({
  evalId: z.string(),
  accountId: z.string(),
  /** The sub-account whose key created it: its caps apply, and only its key (or the main key) sees it. */
  subAccountId: z.string().nullable(),
  keyId: z.string(),
  /** The POST /v1/evals request. */
  requestId: z.string(),
  name: z.string(),
  candidateModels: z.array(z.string()).min(1),
  metric: EvalMetric,
  dataset: z.array(EvalItem).min(1),
  /** OpenAI-style graders the client brought, as given (checked at creation); null: the built-in scoring. */
  testingCriteria: z.array(z.record(z.string(), z.unknown())).nullable(),
  /** The output limit of every candidate call; null: each model's own. */
  maxTokens: z.number().int().positive().nullable(),
  /** The cost tag every call of the eval is charged under. */
  tag: z.string(),
  /** The judge chosen at creation, so that a resumed or repeated run grades alike; null when none was reachable. */
  judgeModel: z.string().nullable(),
});

/** A rerun asked for: the eval's next run, queued. */
export const EvalRerunRequested = z.object({
  evalId: z.string(),
  run: z.number().int().min(2),
  requestId: z.string(),
});

export const EvalRunStarted = z.object({ evalId: z.string(), run: z.number().int().min(1) });

/** Who graded an answer with a model, what it was asked and what that cost. */
export const EvalJudging = z.object({ model: z.string(), prompt: z.string(), costNanos: Nanos });

/** One candidate's answer to one dataset item, scored; once per (run, item, model). */
export const EvalItemScored = z.object({
  evalId: z.string(),
  run: z.number().int().min(1),
  item: z.number().int().nonnegative(),
  model: z.string(),
  /** The id the call was charged and logged under. */
  requestId: z.string(),
  /** The answer's text (its first 2,000 characters); null when the call failed. */
  output: z.string().nullable(),
  /** 0..1; null when the call failed or nothing could grade it. */
  score: z.number().min(0).max(1).nullable(),
  grader: z.enum(['exact', 'contains', 'judge', 'string_check', 'testing_criteria', 'none']),
  judge: EvalJudging.nullable(),
  /** The call's charge (the judge's is in `judge`). */
  costNanos: Nanos,
  latencyMs: z.number().int().nonnegative(),
  error: EvalRunError.nullable(),
  /** Read back from the request log after a restart, not called again. */
  recovered: z.boolean(),
});

/** One candidate's figures over a run. */
export const EvalCandidateResult = z.object({
  model: z.string(),
  n: z.number().int().nonnegative(),
  /** Answers that were graded (n minus errors and ungraded answers). */
  scored: z.number().int().nonnegative(),
  errors: z.number().int().nonnegative(),
  meanScore: z.number().nullable(),
  /** The 95% interval of the mean score: Wilson when every score is 0 or 1, else normal. */
  scoreLow: z.number().nullable(),
  scoreHigh: z.number().nullable(),
  interval: z.enum(['wilson', 'normal']).nullable(),
  costNanos: Nanos,
  judgeCostNanos: Nanos,
  latencyP50Ms: z.number().nullable(),
  latencyP95Ms: z.number().nullable(),
  /** Answered every item with a score within the quality tie of the best: may win on cost or speed. */
  eligible: z.boolean(),
});

export const EvalCompleted = z.object({
  evalId: z.string(),
  accountId: z.string(),
  run: z.number().int().min(1),
  name: z.string(),
  metric: EvalMetric,
  winnerModel: z.string().nullable(),
  tie: z.boolean(),
  tiedModels: z.array(z.string()),
  /** Why the winner won, in words. */
  reason: z.string(),
  candidates: z.array(EvalCandidateResult),
  costNanos: Nanos,
});

export const EvalFailed = z.object({
  evalId: z.string(),
  accountId: z.string(),
  run: z.number().int().min(1),
  name: z.string(),
  error: EvalRunError,
  /** What the run was charged before it stopped. */
  costNanos: Nanos,
});

export const EvalCancelled = z.object({ evalId: z.string(), run: z.number().int().min(1) });

export const evalEventSchemas = {
  EvalCreated,
  EvalRerunRequested,
  EvalRunStarted,
  EvalItemScored,
  EvalCompleted,
  EvalFailed,
  EvalCancelled,
} as const;

export type EvalEvent =
  | { type: 'EvalCreated'; data: z.infer<typeof EvalCreated> }
  | { type: 'EvalRerunRequested'; data: z.infer<typeof EvalRerunRequested> }
  | { type: 'EvalRunStarted'; data: z.infer<typeof EvalRunStarted> }
  | { type: 'EvalItemScored'; data: z.infer<typeof EvalItemScored> }
  | { type: 'EvalCompleted'; data: z.infer<typeof EvalCompleted> }
  | { type: 'EvalFailed'; data: z.infer<typeof EvalFailed> }
  | { type: 'EvalCancelled'; data: z.infer<typeof EvalCancelled> };

export const evalStream = (evalId: string) => `eval-${evalId}`;
