import type { z } from 'zod';
import { DomainError } from '../../commands/errors.ts';
import type { JobError } from '../../events/job.ts';
import type { DescribeError } from '../contracts/errors.ts';
import type { JobCall, JobOutput } from '../contracts/jobs.ts';
import type { BlobStore } from '../files/blob-store.ts';
import type { FilesService } from '../files/service.ts';
import { releaseDeferred, settleDeferred } from '../pipeline/deferred.ts';
import { type CancelOutcome, chargeCancellation, jobState, stopAtProvider } from './cancel-charge.ts';
import { ownerCall } from './credential.ts';
import type { JobKind } from './kinds.ts';
import { storeResult } from './result.ts';
import { type JobHistory, type JobsDeps, readJob, type Target, workOf } from './service.ts';

/** What ending a job needs: where its result goes, who hears of its end, how a failure reads. */
export interface JobEndingDeps extends JobsDeps {
  blobs: BlobStore;
  /** Lists job results in the Files API. */
  files?: Pick<FilesService, 'record'>;
  /** Called once a job has ended (completed, failed or cancelled), for its webhook. */
  onEnded?: (jobId: string) => Promise<void>;
  /** How a failure reads to the API's clients, stored as the job's error. */
  describeError: DescribeError;
}

/**
 * Completes a job the provider delivered: stores the result, settles the hold at the delivered units (the
 * pipeline's deferred call), then records the end. The settlement comes before the completion event, so a crash
 * between them repeats a settle (idempotent) rather than leaving a finished job unbilled.
 */
export async function completeJob(
  deps: JobEndingDeps,
  history: JobHistory,
  kind: JobKind,
  target: Target,
  output: JobOutput,
  credential: string | undefined,
): Promise<void> {
  const job = history.queued;
  const stored = await storeResult(deps, job, output);
  // Cancelled meanwhile: the provider delivered, and billed, the work; the client gets the result it pays for.
  const delivered: CancelOutcome = { basis: 'provider_output', output, stored, credential };
  const now = await readJob(deps.store, job.jobId);
  if (!now || jobState(now).ended) {
    if (now) await chargeIfCancelled(deps, now, kind, target, delivered);
    return;
  }
  // What the job cost its requester: a sub-account's price of the charge.
  const charged = await settleDeferred(deps.spending, job, workOf(kind, target.model), {
    units: output.units,
    usageReported: output.unitsReported,
    credential,
  });
  const completed = await deps.commands
    .handle(
      job.jobId,
      {
        type: 'CompleteJob',
        resultFileId: stored?.fileId ?? null,
        resultFilename: stored?.filename ?? null,
        resultBytes: stored?.bytes ?? null,
        result: output.result ?? null,
        chargedNanos: charged,
        units: output.units,
      },
      { now: deps.clock() },
    )
    .catch(ignoreConflict);
  if (completed) await notifyEnded(deps, history);
  // Cancelled between the settlement and the completion: the charge settled above is the cancellation's.
  else await chargeIfCancelled(deps, history, kind, target, delivered);
}

/** Fails a job that has not ended, and releases its hold. */
export async function failJob(
  deps: JobEndingDeps,
  history: JobHistory,
  error: z.infer<typeof JobError>,
): Promise<void> {
  const decision = await deps.commands.handle(
    history.queued.jobId,
    { type: 'FailJob', error },
    { now: deps.clock() },
  );
  if (decision.events.length === 0) return;
  await releaseDeferred(deps.spending, history.queued, 'failed');
  await notifyEnded(deps, history);
}

/**
 * Charges a cancellation after hand-off when the job is one (reading its stream afresh), and says whether it was.
 * The job's webhook, held back while the charge was pending, is requested once it is recorded.
 */
export async function chargeIfCancelled(
  deps: JobEndingDeps,
  history: JobHistory,
  kind: JobKind,
  target: Target,
  outcome: CancelOutcome,
): Promise<boolean> {
  const now = await readJob(deps.store, history.queued.jobId);
  if (!now || jobState(now).cancelCharge !== 'pending') return false;
  if (await chargeCancellation(deps, now, kind, target, outcome)) await notifyEnded(deps, now);
  return true;
}

/**
 * A cancellation after hand-off whose charge nobody recorded: the cancelling request stopped before it (a submitted
 * job), or the worker submitting it is gone (its claim's lease ran out). The provider reports nothing once asked to
 * stop, so the hold is charged.
 */
export async function chargeStrandedCancel(
  deps: JobEndingDeps,
  history: JobHistory,
  kind: JobKind,
  target: Target,
  call: JobCall,
  state: ReturnType<typeof jobState>,
): Promise<void> {
  if (state.providerJobId) {
    // A credential no longer usable cannot reach the job to stop it; the provider has the work, so it is charged.
    const owner = ownerCall(deps, history.queued, target, call, state);
    if (!('unusable' in owner)) await stopAtProvider(target, owner.call, state.providerJobId);
  } else if (state.leaseUntil !== null && state.leaseUntil > deps.clock().toISOString()) return;
  await chargeIfCancelled(deps, history, kind, target, { basis: 'hold' });
}

/** Requests the webhook of a job that ended, when it asked for one. */
export async function notifyEnded(deps: Pick<JobEndingDeps, 'onEnded'>, history: JobHistory): Promise<void> {
  if (history.queued.webhookUrl) await deps.onEnded?.(history.queued.jobId);
}

export function ignoreConflict(error: unknown): undefined {
  if (error instanceof DomainError) return undefined;
  throw error;
}
