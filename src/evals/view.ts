import type { EvalAnswerRow, EvalRow } from '../../projections/evals/index.ts';
import { nanosToCents } from '../contracts/money.ts';

interface StoredCandidate {
  model: string;
  n: number;
  scored: number;
  errors: number;
  meanScore: number | null;
  scoreLow: number | null;
  scoreHigh: number | null;
  interval: string | null;
  costNanos: string;
  judgeCostNanos: string;
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
  eligible: boolean;
}

interface StoredResult {
  run: number;
  metric: string;
  winnerModel: string | null;
  tie: boolean;
  tiedModels: string[];
  reason: string;
  candidates: StoredCandidate[];
  costNanos: string;
}

const cents = (nanos: string) => nanosToCents(BigInt(nanos));

/**
 * The API's eval: the current run's state and progress, and the newest completed run's result (`winner_model`
 * and the figures per candidate), which is what `eval:<id>` resolves to while a rerun is under way.
 */
export function toEvalObject(row: EvalRow) {
  const result = row.result as StoredResult | null;
  const models = row.candidate_models.length;
  return {
    id: row.eval_id,
    object: 'eval' as const,
    name: row.name,
    metric: row.metric,
    status: row.status,
    model_alias: `eval:${row.eval_id}`,
    candidate_models: row.candidate_models,
    created_at: Math.floor(row.created_at.getTime() / 1000),
    completed_at: row.completed_at === null ? null : Math.floor(row.completed_at.getTime() / 1000),
    run: row.run,
    items_done: row.items_done,
    items_total: row.items_total,
    calls_done: row.calls_done,
    calls_total: row.items_total * models,
    errors: row.errors,
    cost_cents: cents(row.cost_nanos),
    judge_cost_cents: cents(row.judge_cost_nanos),
    tag: row.tag,
    judge_model: row.judge_model,
    testing_criteria: row.testing_criteria,
    error: row.error,
    winner_model: row.winner_model,
    completed_run: row.winner_run,
    tie: result?.tie ?? false,
    tied_models: result?.tiedModels ?? [],
    reason: result?.reason ?? null,
    results:
      result?.candidates.map((c) => ({
        model: c.model,
        n: c.n,
        scored: c.scored,
        errors: c.errors,
        mean_score: c.meanScore,
        score_interval: c.scoreLow === null || c.scoreHigh === null ? null : [c.scoreLow, c.scoreHigh],
        interval: c.interval,
        cost_cents: cents(c.costNanos),
        judge_cost_cents: cents(c.judgeCostNanos),
        latency_p50_ms: c.latencyP50Ms,
        latency_p95_ms: c.latencyP95Ms,
        eligible: c.eligible,
      })) ?? null,
    result_cost_cents: result ? cents(result.costNanos) : null,
  };
}

/** One candidate's answer to one item, graded: its id is the call's request id (its charge and log entry). */
export function toEvalItemObject(row: EvalAnswerRow) {
  return {
    id: row.request_id,
    object: 'eval.item' as const,
    run: row.run,
    item: row.item,
    model: row.model,
    output: row.output,
    score: row.score,
    grader: row.grader,
    judge:
      row.judge_model === null
        ? null
        : {
            model: row.judge_model,
            prompt: row.judge_prompt,
            cost_cents: row.judge_cost_nanos === null ? 0 : cents(row.judge_cost_nanos),
          },
    cost_cents: cents(row.cost_nanos),
    latency_ms: row.latency_ms,
    error: row.error,
    recovered: row.recovered,
  };
}
