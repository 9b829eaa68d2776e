import type { ReplayRow } from '../../projections/replays/index.ts';
import { nanosToCents } from '../contracts/money.ts';

const cents = (nanos: string | null) => (nanos === null ? null : nanosToCents(BigInt(nanos)));

/** The spec's Replay result, with the judge and, for a shadow, its running totals. */
export function toReplayObject(row: ReplayRow) {
  return {
    id: row.replay_id,
    object: 'replay' as const,
    status: row.status,
    source_request_id: row.source_request_id,
    source_model: row.source_model,
    target_model: row.target_model,
    endpoint: row.endpoint,
    created_at: Math.floor(row.created_at.getTime() / 1000),
    source_output: row.source_output,
    target_output: row.target_output,
    cost_source_cents: cents(row.cost_source_nanos),
    cost_target_cents: cents(row.cost_target_nanos),
    latency_source_ms: row.latency_source_ms,
    latency_target_ms: row.latency_target_ms,
    score_delta: row.score_delta,
    scoring: row.scoring,
    judge:
      row.judge_model === null
        ? null
        : { model: row.judge_model, prompt: row.judge_prompt, cost_cents: cents(row.judge_cost_nanos) },
    target_request_id: row.target_request_id,
    error: row.error,
    shadow: row.shadow
      ? {
          sample_rate: row.sample_rate,
          max_requests: row.max_requests,
          tag: row.source_tag,
          count: row.shadow_count,
          wins: row.shadow_wins,
          ties: row.shadow_ties,
          losses: row.shadow_losses,
          mean_score_delta: row.shadow_count === 0 ? null : row.shadow_score_delta_sum / row.shadow_count,
          cost_source_cents: cents(row.shadow_cost_source_nanos),
          cost_target_cents: cents(row.shadow_cost_target_nanos),
          judge_cost_cents: cents(row.shadow_judge_cost_nanos),
          latency_source_ms_total: Number(row.shadow_latency_source_ms),
          latency_target_ms_total: Number(row.shadow_latency_target_ms),
          stopped_reason: row.stopped_reason,
          // Why a paused shadow mirrors nothing for now; null unless `status` is `paused`.
          paused:
            row.paused_at === null
              ? null
              : {
                  reason: row.paused_reason,
                  message: row.paused_message,
                  since: Math.floor(row.paused_at.getTime() / 1000),
                },
        }
      : null,
  };
}
