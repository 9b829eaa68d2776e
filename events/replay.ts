import { z } from 'zod';
import { Nanos } from './money.ts';

/**
 * Events of the `replay-{replayId}` stream: a logged request re-run against another model, and, for a shadow,
 * every later request mirrored to it until the shadow is stopped.
 */

export const ReplayEndpoint = z.enum(['/v1/chat/completions', '/v1/messages']);

export const ReplayRequested = z.object({
  replayId: z.string(),
  accountId: z.string(),
  /** The sub-account whose key asked, if one did: a sub-account key sees only its own replays. */
  subAccountId: z.string().nullable().optional(),
  keyId: z.string(),
  /** The POST /v1/replays request, whose id the target call is logged under. */
  requestId: z.string(),
  sourceRequestId: z.string(),
  sourceModel: z.string(),
  /** The source's tag: a shadow mirrors only later requests under the same one. */
  sourceTag: z.string().nullable(),
  endpoint: ReplayEndpoint,
  targetModel: z.string(),
  shadow: z.boolean(),
  /** Share of the matching later requests a shadow mirrors, 0..1. */
  sampleRate: z.number().min(0).max(1),
  /** A shadow stops by itself after this many comparisons. */
  maxRequests: z.number().int().positive(),
});

/** Who judged a comparison, what it was asked (one order; the other swaps A and B) and what it cost. */
export const ReplayJudge = z.object({
  model: z.string(),
  prompt: z.string(),
  costNanos: Nanos,
});

export const ReplayCompleted = z.object({
  replayId: z.string(),
  /** The id the target call was charged and logged under. */
  targetRequestId: z.string(),
  sourceOutput: z.string(),
  targetOutput: z.string(),
  costSourceNanos: Nanos,
  costTargetNanos: Nanos,
  latencySourceMs: z.number().int().nonnegative(),
  latencyTargetMs: z.number().int().nonnegative(),
  /** score(target) − score(source), −1..1. */
  scoreDelta: z.number().min(-1).max(1),
  scoring: z.enum(['judge', 'similarity']),
  judge: ReplayJudge.nullable(),
});

export const ReplayFailed = z.object({
  replayId: z.string(),
  error: z.object({ message: z.string(), type: z.string(), code: z.number().int() }),
});

/** One later request mirrored by a shadow, and how the target compared. */
export const ShadowSampled = z.object({
  replayId: z.string(),
  sourceRequestId: z.string(),
  targetRequestId: z.string(),
  costSourceNanos: Nanos,
  costTargetNanos: Nanos,
  /** The judge's charges, billed like the target's. */
  judgeCostNanos: Nanos,
  latencySourceMs: z.number().int().nonnegative(),
  latencyTargetMs: z.number().int().nonnegative(),
  scoreDelta: z.number().min(-1).max(1),
  scoring: z.enum(['judge', 'similarity']),
});

export const ShadowStopped = z.object({
  replayId: z.string(),
  reason: z.enum(['deleted', 'max_requests']),
});

/**
 * A shadow whose comparison its payer could not pay for (its balance, its sub-account's spend cap or a tag's
 * budget refused the hold): it mirrors nothing more until it is resumed. Recorded once per pause.
 */
export const ShadowPaused = z.object({
  replayId: z.string(),
  /** 1 for the shadow's first pause, then 2, …: `ShadowResumed` names the pause it ends. */
  pause: z.number().int().positive(),
  /** The refusal's kind, as the API types it. */
  reason: z.enum(['insufficient_balance', 'budget_exceeded']),
  message: z.string(),
  /** The mirrored request whose comparison was refused. */
  sourceRequestId: z.string(),
  /** When that comparison was started: money that came back after it may not have been seen by its refusal. */
  triedAt: z.string().datetime(),
});

/** A paused shadow mirroring again: something happened that may let its payer pay (the reason). */
export const ShadowResumed = z.object({
  replayId: z.string(),
  pause: z.number().int().positive(),
  reason: z.enum(['topped_up', 'cap_changed', 'budget_set', 'new_month']),
});

export const replayEventSchemas = {
  ReplayRequested,
  ReplayCompleted,
  ReplayFailed,
  ShadowSampled,
  ShadowStopped,
  ShadowPaused,
  ShadowResumed,
} as const;

export type ReplayEvent =
  | { type: 'ReplayRequested'; data: z.infer<typeof ReplayRequested> }
  | { type: 'ReplayCompleted'; data: z.infer<typeof ReplayCompleted> }
  | { type: 'ReplayFailed'; data: z.infer<typeof ReplayFailed> }
  | { type: 'ShadowSampled'; data: z.infer<typeof ShadowSampled> }
  | { type: 'ShadowStopped'; data: z.infer<typeof ShadowStopped> }
  | { type: 'ShadowPaused'; data: z.infer<typeof ShadowPaused> }
  | { type: 'ShadowResumed'; data: z.infer<typeof ShadowResumed> };

export const replayStream = (replayId: string) => `replay-${replayId}`;
