import type { Projection, Sql } from '../types.ts';

/**
 * Replays as the API lists them: the one comparison of a replay, and a shadow's running totals (count,
 * wins/ties/losses, the sum of score deltas for the mean, costs and latencies of both sides). Money in nanos.
 */
export const replaysProjection: Projection = {
  name: 'replays',
  version: 3,
  tables: {
    replays: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      replay_id text PRIMARY KEY,
      account_id text NOT NULL,
      sub_account_id text,
      source_request_id text NOT NULL,
      source_model text NOT NULL,
      source_tag text,
      endpoint text NOT NULL,
      target_model text NOT NULL,
      shadow boolean NOT NULL,
      sample_rate double precision NOT NULL,
      max_requests integer NOT NULL,
      status text NOT NULL,
      stopped_reason text,
      paused_reason text,
      paused_message text,
      paused_at timestamptz,
      error jsonb,
      target_request_id text,
      source_output text,
      target_output text,
      cost_source_nanos numeric,
      cost_target_nanos numeric,
      latency_source_ms integer,
      latency_target_ms integer,
      score_delta double precision,
      scoring text,
      judge_model text,
      judge_prompt text,
      judge_cost_nanos numeric,
      shadow_count integer NOT NULL DEFAULT 0,
      shadow_wins integer NOT NULL DEFAULT 0,
      shadow_ties integer NOT NULL DEFAULT 0,
      shadow_losses integer NOT NULL DEFAULT 0,
      shadow_score_delta_sum double precision NOT NULL DEFAULT 0,
      shadow_cost_source_nanos numeric NOT NULL DEFAULT 0,
      shadow_cost_target_nanos numeric NOT NULL DEFAULT 0,
      shadow_judge_cost_nanos numeric NOT NULL DEFAULT 0,
      shadow_latency_source_ms bigint NOT NULL DEFAULT 0,
      shadow_latency_target_ms bigint NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE INDEX ON ${t} (account_id, created_at DESC)`,
  },
  canHandle: [
    'ReplayRequested',
    'ReplayCompleted',
    'ReplayFailed',
    'ShadowSampled',
    'ShadowStopped',
    'ShadowPaused',
    'ShadowResumed',
  ],
  async evolve(sql, t, event, stored) {
    const at = stored.occurredAt;
    switch (event.type) {
      case 'ReplayRequested': {
        const d = event.data;
        await sql.query(
          `INSERT INTO ${t.replays} (replay_id, account_id, source_request_id, source_model, source_tag, endpoint,
             target_model, shadow, sample_rate, max_requests, status, created_at, updated_at, sub_account_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'running', $11, $11, $12) ON CONFLICT DO NOTHING`,
          [
            d.replayId,
            d.accountId,
            d.sourceRequestId,
            d.sourceModel,
            d.sourceTag,
            d.endpoint,
            d.targetModel,
            d.shadow,
            d.sampleRate,
            d.maxRequests,
            at,
            d.subAccountId ?? null,
          ],
        );
        return;
      }
      case 'ReplayCompleted': {
        const d = event.data;
        await sql.query(
          `UPDATE ${t.replays} SET status = CASE WHEN shadow THEN 'shadowing' ELSE 'completed' END,
             target_request_id = $2, source_output = $3, target_output = $4, cost_source_nanos = $5,
             cost_target_nanos = $6, latency_source_ms = $7, latency_target_ms = $8, score_delta = $9,
             scoring = $10, judge_model = $11, judge_prompt = $12, judge_cost_nanos = $13, updated_at = $14
           WHERE replay_id = $1`,
          [
            d.replayId,
            d.targetRequestId,
            d.sourceOutput,
            d.targetOutput,
            d.costSourceNanos,
            d.costTargetNanos,
            d.latencySourceMs,
            d.latencyTargetMs,
            d.scoreDelta,
            d.scoring,
            d.judge?.model ?? null,
            d.judge?.prompt ?? null,
            d.judge?.costNanos ?? null,
            at,
          ],
        );
        return;
      }
      case 'ReplayFailed':
        await sql.query(
          `UPDATE ${t.replays} SET status = 'failed', error = $2, updated_at = $3 WHERE replay_id = $1`,
          [event.data.replayId, JSON.stringify(event.data.error), at],
        );
        return;
      case 'ShadowSampled': {
        const d = event.data;
        await sql.query(
          `UPDATE ${t.replays} SET shadow_count = shadow_count + 1,
             shadow_wins = shadow_wins + CASE WHEN $2::double precision > 0 THEN 1 ELSE 0 END,
             shadow_ties = shadow_ties + CASE WHEN $2::double precision = 0 THEN 1 ELSE 0 END,
             shadow_losses = shadow_losses + CASE WHEN $2::double precision < 0 THEN 1 ELSE 0 END,
             shadow_score_delta_sum = shadow_score_delta_sum + $2,
             shadow_cost_source_nanos = shadow_cost_source_nanos + $3,
             shadow_cost_target_nanos = shadow_cost_target_nanos + $4,
             shadow_judge_cost_nanos = shadow_judge_cost_nanos + $5,
             shadow_latency_source_ms = shadow_latency_source_ms + $6,
             shadow_latency_target_ms = shadow_latency_target_ms + $7, updated_at = $8
           WHERE replay_id = $1`,
          [
            d.replayId,
            d.scoreDelta,
            d.costSourceNanos,
            d.costTargetNanos,
            d.judgeCostNanos,
            d.latencySourceMs,
            d.latencyTargetMs,
            at,
          ],
        );
        return;
      }
      case 'ShadowStopped':
        await sql.query(
          `UPDATE ${t.replays} SET status = 'stopped', stopped_reason = $2, paused_reason = NULL, paused_message = NULL,
             paused_at = NULL, updated_at = $3 WHERE replay_id = $1`,
          [event.data.replayId, event.data.reason, at],
        );
        return;
      case 'ShadowPaused':
        await sql.query(
          `UPDATE ${t.replays} SET status = 'paused', paused_reason = $2, paused_message = $3, paused_at = $4,
             updated_at = $4 WHERE replay_id = $1 AND status = 'shadowing'`,
          [event.data.replayId, event.data.reason, event.data.message, at],
        );
        return;
      case 'ShadowResumed':
        await sql.query(
          `UPDATE ${t.replays} SET status = 'shadowing', paused_reason = NULL, paused_message = NULL, paused_at = NULL,
             updated_at = $2 WHERE replay_id = $1 AND status = 'paused'`,
          [event.data.replayId, at],
        );
        return;
      default:
        return;
    }
  },
};

export interface ReplayRow {
  replay_id: string;
  account_id: string;
  source_request_id: string;
  source_model: string;
  source_tag: string | null;
  endpoint: string;
  target_model: string;
  shadow: boolean;
  sample_rate: number;
  max_requests: number;
  status: string;
  stopped_reason: string | null;
  paused_reason: string | null;
  paused_message: string | null;
  paused_at: Date | null;
  error: { message: string; type: string; code: number } | null;
  target_request_id: string | null;
  source_output: string | null;
  target_output: string | null;
  cost_source_nanos: string | null;
  cost_target_nanos: string | null;
  latency_source_ms: number | null;
  latency_target_ms: number | null;
  score_delta: number | null;
  scoring: string | null;
  judge_model: string | null;
  judge_prompt: string | null;
  judge_cost_nanos: string | null;
  shadow_count: number;
  shadow_wins: number;
  shadow_ties: number;
  shadow_losses: number;
  shadow_score_delta_sum: number;
  shadow_cost_source_nanos: string;
  shadow_cost_target_nanos: string;
  shadow_judge_cost_nanos: string;
  shadow_latency_source_ms: string;
  shadow_latency_target_ms: string;
  created_at: Date;
}

/**
 * One account's replay, or undefined (another account's reads as missing); with a sub-account, only one that
 * sub-account's key asked for.
 */
export async function replayRow(
  sql: Sql,
  accountId: string,
  replayId: string,
  subAccountId: string | null = null,
): Promise<ReplayRow | undefined> {
  const { rows } = await sql.query<ReplayRow & Record<string, unknown>>(
    `SELECT * FROM replays WHERE replay_id = $1 AND account_id = $2
       AND ($3::text IS NULL OR sub_account_id = $3)`,
    [replayId, accountId, subAccountId],
  );
  return rows[0];
}

/** The account's replays, newest first, after the replay `after`; one more than `limit` tells whether more follow. */
export async function listReplays(
  sql: Sql,
  accountId: string,
  query: { limit: number; after?: string },
  subAccountId: string | null = null,
): Promise<ReplayRow[]> {
  const { rows } = await sql.query<ReplayRow & Record<string, unknown>>(
    `SELECT * FROM replays
     WHERE account_id = $1
       AND ($4::text IS NULL OR sub_account_id = $4)
       AND ($2::text IS NULL OR (created_at, replay_id) < (
         SELECT created_at, replay_id FROM replays WHERE replay_id = $2 AND account_id = $1))
     ORDER BY created_at DESC, replay_id DESC LIMIT $3`,
    [accountId, query.after ?? null, query.limit + 1, subAccountId],
  );
  return rows;
}

/** Shadows still mirroring, for the shadow worker to pick up on start. */
export async function activeShadows(sql: Sql): Promise<string[]> {
  const { rows } = await sql.query<{ replay_id: string }>(
    `SELECT replay_id FROM replays WHERE shadow AND status = 'shadowing' ORDER BY created_at`,
  );
  return rows.map((row) => row.replay_id);
}
