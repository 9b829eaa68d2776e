import type { Projection, Sql } from '../types.ts';

/**
 * Evals as the API shows them: the current run's state and progress, what it has been charged, and the newest
 * completed run's result and winner (what the `eval:<id>` alias resolves to). `eval_answers` holds every recorded
 * answer of a run with its grading, so that an item counts as done once every candidate has answered it and the
 * answers can be listed.
 */
export const evalsProjection: Projection = {
  name: 'evals',
  version: 2,
  tables: {
    evals: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      eval_id text PRIMARY KEY,
      account_id text NOT NULL,
      sub_account_id text,
      name text NOT NULL,
      metric text NOT NULL,
      candidate_models jsonb NOT NULL,
      testing_criteria jsonb,
      tag text NOT NULL,
      judge_model text,
      items_total integer NOT NULL,
      run integer NOT NULL,
      status text NOT NULL,
      items_done integer NOT NULL DEFAULT 0,
      calls_done integer NOT NULL DEFAULT 0,
      errors integer NOT NULL DEFAULT 0,
      cost_nanos numeric NOT NULL DEFAULT 0,
      judge_cost_nanos numeric NOT NULL DEFAULT 0,
      error jsonb,
      result jsonb,
      winner_model text,
      winner_run integer,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      completed_at timestamptz
    );
    CREATE INDEX ON ${t} (account_id, created_at DESC)`,
    eval_answers: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      eval_id text NOT NULL,
      run integer NOT NULL,
      item integer NOT NULL,
      model text NOT NULL,
      request_id text NOT NULL,
      output text,
      score double precision,
      grader text NOT NULL,
      judge_model text,
      judge_prompt text,
      judge_cost_nanos numeric,
      cost_nanos numeric NOT NULL,
      latency_ms integer NOT NULL,
      error jsonb,
      recovered boolean NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (eval_id, run, item, model)
    )`,
  },
  canHandle: [
    'EvalCreated',
    'EvalRerunRequested',
    'EvalRunStarted',
    'EvalItemScored',
    'EvalCompleted',
    'EvalFailed',
    'EvalCancelled',
  ],
  async evolve(sql, t, event, stored) {
    const at = stored.occurredAt;
    switch (event.type) {
      case 'EvalCreated': {
        const d = event.data;
        await sql.query(
          `INSERT INTO ${t.evals} (eval_id, account_id, sub_account_id, name, metric, candidate_models,
             testing_criteria, tag, judge_model, items_total, run, status, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 1, 'queued', $11, $11) ON CONFLICT DO NOTHING`,
          [
            d.evalId,
            d.accountId,
            d.subAccountId,
            d.name,
            d.metric,
            JSON.stringify(d.candidateModels),
            d.testingCriteria === null ? null : JSON.stringify(d.testingCriteria),
            d.tag,
            d.judgeModel,
            d.dataset.length,
            at,
          ],
        );
        return;
      }
      case 'EvalRerunRequested':
        await sql.query(
          `UPDATE ${t.evals} SET run = $2, status = 'queued', items_done = 0, calls_done = 0, errors = 0,
             cost_nanos = 0, judge_cost_nanos = 0, error = NULL, updated_at = $3
           WHERE eval_id = $1`,
          [event.data.evalId, event.data.run, at],
        );
        return;
      case 'EvalRunStarted':
        await sql.query(
          `UPDATE ${t.evals} SET status = 'running', updated_at = $3
           WHERE eval_id = $1 AND run = $2 AND status IN ('queued', 'running')`,
          [event.data.evalId, event.data.run, at],
        );
        return;
      case 'EvalItemScored': {
        const d = event.data;
        const { rowCount } = await sql.query(
          `INSERT INTO ${t.eval_answers} (eval_id, run, item, model, request_id, output, score, grader, judge_model,
             judge_prompt, judge_cost_nanos, cost_nanos, latency_ms, error, recovered, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) ON CONFLICT DO NOTHING`,
          [
            d.evalId,
            d.run,
            d.item,
            d.model,
            d.requestId,
            d.output,
            d.score,
            d.grader,
            d.judge?.model ?? null,
            d.judge?.prompt ?? null,
            d.judge?.costNanos ?? null,
            d.costNanos,
            d.latencyMs,
            d.error === null ? null : JSON.stringify(d.error),
            d.recovered,
            at,
          ],
        );
        if (rowCount === 0) return;
        await sql.query(
          `UPDATE ${t.evals} e SET calls_done = calls_done + 1,
             errors = errors + CASE WHEN $4 THEN 1 ELSE 0 END,
             cost_nanos = cost_nanos + $5::numeric + $6::numeric, judge_cost_nanos = judge_cost_nanos + $6::numeric,
             items_done = items_done + CASE WHEN (SELECT count(*) FROM ${t.eval_answers} a
               WHERE a.eval_id = $1 AND a.run = $2 AND a.item = $3) = jsonb_array_length(e.candidate_models)
               THEN 1 ELSE 0 END,
             updated_at = $7
           WHERE eval_id = $1 AND run = $2`,
          [d.evalId, d.run, d.item, d.error !== null, d.costNanos, d.judge?.costNanos ?? '0', at],
        );
        return;
      }
      case 'EvalCompleted': {
        const d = event.data;
        const { evalId: _e, accountId: _a, name: _n, ...result } = d;
        await sql.query(
          `UPDATE ${t.evals} SET status = 'completed', result = $3, winner_model = $4, winner_run = $2,
             completed_at = $5, updated_at = $5 WHERE eval_id = $1 AND run = $2`,
          [d.evalId, d.run, JSON.stringify(result), d.winnerModel, at],
        );
        return;
      }
      case 'EvalFailed':
        await sql.query(
          `UPDATE ${t.evals} SET status = 'failed', error = $3, updated_at = $4 WHERE eval_id = $1 AND run = $2`,
          [event.data.evalId, event.data.run, JSON.stringify(event.data.error), at],
        );
        return;
      case 'EvalCancelled':
        await sql.query(
          `UPDATE ${t.evals} SET status = 'cancelled', updated_at = $3 WHERE eval_id = $1 AND run = $2`,
          [event.data.evalId, event.data.run, at],
        );
        return;
      default:
        return;
    }
  },
};

export interface EvalRow {
  eval_id: string;
  account_id: string;
  sub_account_id: string | null;
  name: string;
  metric: string;
  candidate_models: string[];
  testing_criteria: unknown[] | null;
  tag: string;
  judge_model: string | null;
  items_total: number;
  run: number;
  status: string;
  items_done: number;
  calls_done: number;
  errors: number;
  cost_nanos: string;
  judge_cost_nanos: string;
  error: { message: string; type: string; code: number } | null;
  result: Record<string, unknown> | null;
  winner_model: string | null;
  winner_run: number | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

/** An eval of the account, or undefined (another account's reads as missing); a sub-account sees only its own. */
export async function evalRow(
  sql: Sql,
  accountId: string,
  evalId: string,
  subAccountId: string | null = null,
): Promise<EvalRow | undefined> {
  const { rows } = await sql.query<EvalRow & Record<string, unknown>>(
    `SELECT * FROM evals WHERE eval_id = $1 AND account_id = $2 AND ($3::text IS NULL OR sub_account_id = $3)`,
    [evalId, accountId, subAccountId],
  );
  return rows[0];
}

/** The account's evals, newest first, after the eval `after`; one more than `limit` tells whether more follow. */
export async function listEvals(
  sql: Sql,
  accountId: string,
  query: { limit: number; after?: string },
  subAccountId: string | null = null,
): Promise<EvalRow[]> {
  const { rows } = await sql.query<EvalRow & Record<string, unknown>>(
    `SELECT * FROM evals
     WHERE account_id = $1
       AND ($4::text IS NULL OR sub_account_id = $4)
       AND ($2::text IS NULL OR (created_at, eval_id) < (
         SELECT created_at, eval_id FROM evals WHERE eval_id = $2 AND account_id = $1))
     ORDER BY created_at DESC, eval_id DESC LIMIT $3`,
    [accountId, query.after ?? null, query.limit + 1, subAccountId],
  );
  return rows;
}

/** Evals with a run to work (queued, or running and perhaps left by a stopped gateway), oldest first. */
export async function dueEvals(sql: Sql, limit: number): Promise<string[]> {
  const { rows } = await sql.query<{ eval_id: string }>(
    `SELECT eval_id FROM evals WHERE status IN ('queued', 'running') ORDER BY created_at LIMIT $1`,
    [limit],
  );
  return rows.map((row) => row.eval_id);
}

export async function evalStatus(sql: Sql, evalId: string): Promise<string | undefined> {
  const { rows } = await sql.query<{ status: string }>(`SELECT status FROM evals WHERE eval_id = $1`, [
    evalId,
  ]);
  return rows[0]?.status;
}

/** The account's completed evals, newest first: for a router that prefers measured quality to its prior. */
export async function completedEvalResults(
  sql: Sql,
  accountId: string,
): Promise<{ evalId: string; metric: string; result: Record<string, unknown>; completedAt: Date }[]> {
  const { rows } = await sql.query<{
    eval_id: string;
    metric: string;
    result: Record<string, unknown>;
    completed_at: Date;
  }>(
    `SELECT eval_id, metric, result, completed_at FROM evals
     WHERE account_id = $1 AND result IS NOT NULL ORDER BY completed_at DESC LIMIT 100`,
    [accountId],
  );
  return rows.map((r) => ({
    evalId: r.eval_id,
    metric: r.metric,
    result: r.result,
    completedAt: r.completed_at,
  }));
}

export interface EvalAnswerRow {
  eval_id: string;
  run: number;
  item: number;
  model: string;
  request_id: string;
  output: string | null;
  score: number | null;
  grader: string;
  judge_model: string | null;
  judge_prompt: string | null;
  judge_cost_nanos: string | null;
  cost_nanos: string;
  latency_ms: number;
  error: { message: string; type: string; code: number } | null;
  recovered: boolean;
}

/** One run's answers by item, then model; after the answer whose request id is `after`; one more than `limit`. */
export async function listEvalAnswers(
  sql: Sql,
  evalId: string,
  query: { run: number; limit: number; after?: string; model?: string },
): Promise<EvalAnswerRow[]> {
  const { rows } = await sql.query<EvalAnswerRow & Record<string, unknown>>(
    `SELECT * FROM eval_answers
     WHERE eval_id = $1 AND run = $2 AND ($5::text IS NULL OR model = $5)
       AND ($3::text IS NULL OR (item, model) > (
         SELECT item, model FROM eval_answers WHERE eval_id = $1 AND run = $2 AND request_id = $3))
     ORDER BY item, model LIMIT $4`,
    [evalId, query.run, query.after ?? null, query.limit + 1, query.model ?? null],
  );
  return rows;
}
