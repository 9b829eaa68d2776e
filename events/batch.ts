import { z } from 'zod';
import { Nanos } from './money.ts';

/** Events of the `batch-{batchId}` stream: one batch of requests worked by the gateway's batch worker. */

export const BatchEndpoint = z.enum(['/v1/chat/completions', '/v1/embeddings']);

export const BatchProblem = z.object({
  code: z.string(),
  message: z.string(),
  /** 1-based line of the input file the problem is about, when there is one. */
  line: z.number().int().positive().nullable(),
  param: z.string().nullable(),
});

export const BatchCreated = z.object({
  batchId: z.string(),
  accountId: z.string(),
  subAccountId: z.string().nullable(),
  keyId: z.string(),
  /** The cost tag every line is charged under (the request's `x-gw-tag`, else the sub-account's default). */
  tag: z.string().nullable(),
  inputFileId: z.string(),
  endpoint: BatchEndpoint,
  completionWindow: z.literal('24h'),
  metadata: z.record(z.string(), z.string()).nullable(),
  expiresAt: z.string(),
});

/** The input file parsed: `total` non-empty lines, of which `invalid` go to the error file unrun. */
export const BatchValidated = z.object({
  batchId: z.string(),
  total: z.number().int().nonnegative(),
  invalid: z.array(
    z.object({ line: z.number().int().positive(), customId: z.string().nullable(), message: z.string() }),
  ),
});

/** A worker took the batch (queued → in_progress on the first take; later takes are resumptions). */
export const BatchStarted = z.object({
  batchId: z.string(),
  /** Which take this is, from 1; above 1 the batch is resumed after a stop. */
  take: z.number().int().positive(),
});

/** One line finished: its response (2xx goes to the output file) or its failure (the error file). */
export const BatchLineFinished = z.object({
  batchId: z.string(),
  line: z.number().int().positive(),
  customId: z.string(),
  /** The line's request id: the `request_id` of its output and of its charge. */
  requestId: z.string(),
  statusCode: z.number().int(),
  body: z.unknown().nullable(),
  /**
   * The body as JSON text when it holds text no store can keep (U+0000, an unpaired surrogate; an upstream's
   * answer may): `body` is then null, and the output file gets this text as it is, every character intact.
   */
  bodyJson: z.string().optional(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  /** What the line was charged (settled plus any overrun), equal to its request's charges. */
  costNanos: Nanos,
});

/**
 * Lines held and about to go to their provider's batch API as one upstream batch (`group`, one model): each line
 * with the hold that stands for it until the provider's usage settles it. Recorded before the submission, so a
 * restart finds the holds and never holds or submits the lines again.
 */
export const BatchUpstreamPrepared = z.object({
  batchId: z.string(),
  /** The gateway's name for the upstream batch: `{batchId}/{n}`, also its name at the provider where it has one. */
  group: z.string(),
  model: z.string(),
  provider: z.string(),
  /**
   * The provider credential it is submitted, looked up, polled, downloaded and cancelled with, by its pool name (the
   * provider holds the batch under that key). Absent in events written before pools: the provider's single key.
   */
  credential: z.string().optional(),
  /**
   * With a `byok:<name>` credential (the requester's own provider key): that key's id, which every later call about
   * the batch is made with (a key registered since under the same name is another key).
   */
  providerKeyId: z.string().optional(),
  lines: z.array(
    z.object({
      line: z.number().int().positive(),
      customId: z.string(),
      holdId: z.string(),
      heldNanos: Nanos,
      /** The output limit sent upstream (the client's, or as much as the hold affords). */
      maxTokens: z.number().int().positive(),
    }),
  ),
});

/** The provider accepted the upstream batch: its id there, polled until it ends, across restarts. */
export const BatchUpstreamSubmitted = z.object({
  batchId: z.string(),
  group: z.string(),
  upstreamBatchId: z.string(),
});

/**
 * The upstream batch is over: `ended` (its results are read and each line settled from the provider's usage),
 * `failed`, `expired` or `cancelled` (the lines it did not serve are released and recorded failed).
 */
export const BatchUpstreamEnded = z.object({
  batchId: z.string(),
  group: z.string(),
  state: z.enum(['ended', 'failed', 'expired', 'cancelled']),
  message: z.string().nullable(),
});

export const BatchCancelRequested = z.object({ batchId: z.string() });

export const BatchFinalizing = z.object({ batchId: z.string() });

const Outcome = {
  batchId: z.string(),
  outputFileId: z.string().nullable(),
  errorFileId: z.string().nullable(),
  completed: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
};

export const BatchCompleted = z.object(Outcome);
export const BatchExpired = z.object(Outcome);
export const BatchCancelled = z.object(Outcome);

/** Validation failed: nothing was run. */
export const BatchFailed = z.object({ batchId: z.string(), errors: z.array(BatchProblem) });

export const batchEventSchemas = {
  BatchCreated,
  BatchValidated,
  BatchStarted,
  BatchLineFinished,
  BatchUpstreamPrepared,
  BatchUpstreamSubmitted,
  BatchUpstreamEnded,
  BatchCancelRequested,
  BatchFinalizing,
  BatchCompleted,
  BatchExpired,
  BatchCancelled,
  BatchFailed,
} as const;

type Of<T extends keyof typeof batchEventSchemas> = { type: T; data: z.infer<(typeof batchEventSchemas)[T]> };
export type BatchEvent =
  | Of<'BatchCreated'>
  | Of<'BatchValidated'>
  | Of<'BatchStarted'>
  | Of<'BatchLineFinished'>
  | Of<'BatchUpstreamPrepared'>
  | Of<'BatchUpstreamSubmitted'>
  | Of<'BatchUpstreamEnded'>
  | Of<'BatchCancelRequested'>
  | Of<'BatchFinalizing'>
  | Of<'BatchCompleted'>
  | Of<'BatchExpired'>
  | Of<'BatchCancelled'>
  | Of<'BatchFailed'>;

export const batchStream = (batchId: string) => `batch-${batchId}`;
