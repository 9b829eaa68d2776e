import { z } from 'zod';
import { Nanos } from './money.ts';

/** Events of the `job-{jobId}` stream: one asynchronous generation (music, video, 3D, transcription). */

export const JobModality = z.enum(['music', 'video', '3d', 'transcription']);

export const JobError = z.object({
  message: z.string(),
  /** The API's error type (provider_error, timeout_error, invalid_request_error, cancelled). */
  type: z.string(),
  code: z.number().int(),
});

export const JobQueued = z.object({
  jobId: z.string(),
  accountId: z.string(),
  subAccountId: z.string().nullable(),
  keyId: z.string(),
  tag: z.string().nullable(),
  modality: JobModality,
  /** The catalog id, `<provider>/<model>`. */
  model: z.string(),
  provider: z.string(),
  /** What the provider is asked for, as the client sent it (validated). */
  input: z.record(z.string(), z.unknown()),
  webhookUrl: z.string().nullable(),
  /** The reservation made at submission, settled on completion and released on failure or cancel. */
  holdId: z.string(),
  requestId: z.string(),
  heldNanos: Nanos,
});

/** A worker took the job for one attempt; another worker may take it again once the lease has run out. */
export const JobClaimed = z.object({
  jobId: z.string(),
  attempt: z.number().int().positive(),
  leaseUntil: z.string(),
});

/** The provider accepted the work and gave its own id, polled from here on. */
export const JobSubmitted = z.object({
  jobId: z.string(),
  attempt: z.number().int().positive(),
  providerJobId: z.string(),
  /**
   * The provider credential it was submitted with, by its pool name: the provider holds the job under that key, so
   * it is polled and cancelled with it. Absent in events written before pools: the provider's single key.
   */
  credential: z.string().optional(),
  /**
   * With a `byok:<name>` credential: the id of the requester's own provider key it was submitted on, which it is
   * followed with (a key registered since under the same name is another key).
   */
  providerKeyId: z.string().optional(),
});

/** An attempt failed for a passing reason (network, 5xx, 429); the job is tried again from `retryAt`. */
export const JobAttemptFailed = z.object({
  jobId: z.string(),
  attempt: z.number().int().positive(),
  error: JobError,
  retryAt: z.string(),
});

export const JobCompleted = z.object({
  jobId: z.string(),
  /** The stored result as a file (`files/{id}` in the API), absent for a transcription (its result is text). */
  resultFileId: z.string().nullable(),
  resultFilename: z.string().nullable(),
  resultBytes: z.number().int().nonnegative().nullable(),
  /** A transcription's transcript `{text, segments}`; other results are files. */
  result: z.record(z.string(), z.unknown()).nullable(),
  chargedNanos: Nanos,
  units: z.number(),
});

export const JobFailed = z.object({
  jobId: z.string(),
  error: JobError,
});

/** Cancelled by the client before it finished; it reads as failed with error type `cancelled`. */
export const JobCancelled = z.object({
  jobId: z.string(),
  /** Whether the provider's work was under way (and asked to stop). */
  wasSubmitted: z.boolean(),
  /**
   * Whether the work had been handed to the provider (claimed by a worker: submitted, or being submitted), so that
   * the provider may bill it: the hold then stays until `JobCancelCharged` says what was charged. Absent in events
   * written before cancellations were charged: those released their hold.
   */
  billable: z.boolean().optional(),
});

/**
 * What a cancellation after hand-off was charged, recorded after the hold was settled (or released, when the
 * provider turned the work down). `basis`: `provider_output` (the provider delivered units, charged as produced),
 * `hold` (the provider had the work and reports nothing after a cancel, so the held worst case), `not_taken` (the
 * provider refused or failed the submission: nothing charged).
 */
export const JobCancelCharged = z.object({
  jobId: z.string(),
  chargedNanos: Nanos,
  units: z.number(),
  basis: z.enum(['provider_output', 'hold', 'not_taken']),
  /** The result the provider delivered anyway, stored and listed as the job's file (null when none). */
  resultFileId: z.string().nullable(),
  resultFilename: z.string().nullable(),
});

export const jobEventSchemas = {
  JobQueued,
  JobClaimed,
  JobSubmitted,
  JobAttemptFailed,
  JobCompleted,
  JobFailed,
  JobCancelled,
  JobCancelCharged,
} as const;

type Of<T extends keyof typeof jobEventSchemas> = { type: T; data: z.infer<(typeof jobEventSchemas)[T]> };
export type JobEvent =
  | Of<'JobQueued'>
  | Of<'JobClaimed'>
  | Of<'JobSubmitted'>
  | Of<'JobAttemptFailed'>
  | Of<'JobCompleted'>
  | Of<'JobFailed'>
  | Of<'JobCancelled'>
  | Of<'JobCancelCharged'>;

export const jobStream = (jobId: string) => `job-${jobId}`;
