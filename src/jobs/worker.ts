import type pg from 'pg';
import type { z } from 'zod';
import { DomainError } from '../../commands/errors.ts';
import type { JobError } from '../../events/job.ts';
import { dueJobs, jobsAwaitingWebhook } from '../../projections/jobs/index.ts';
import { type DescribeError, RequestRefused } from '../contracts/errors.ts';
import type { JobCall, JobInput, JobOutput } from '../contracts/jobs.ts';
import type { BlobStore } from '../files/blob-store.ts';
import type { FilesService } from '../files/service.ts';
import { allowPrivateUrls } from '../net/url-guard.ts';
import { release, settle } from '../pipeline/ledger.ts';
import { UpstreamError } from '../providers/errors.ts';
import { type CancelOutcome, chargeCancellation, jobState, stopAtProvider } from './cancel-charge.ts';
import { jobCharge, ownerCall, type Submitted, submitOnKey } from './credential.ts';
import { asJobError } from './job-error.ts';
import { JOB_KINDS, type JobKind } from './kinds.ts';
import { storeResult } from './result.ts';
import {
  holdOf,
  type JobHistory,
  type JobsDeps,
  linesOf,
  readJob,
  resolveJobModel,
  type Target,
} from './service.ts';

export interface JobWorkerDeps extends JobsDeps {
  pool: pg.Pool;
  blobs: BlobStore;
  log: (line: string) => void;
  /** Kinds beyond the generation endpoints' own (async transcription). */
  extraKinds?: Readonly<Record<string, JobKind>>;
  /** Lists job results in the Files API. */
  files?: Pick<FilesService, 'record'>;
  /** Called once a job has ended (completed, failed or cancelled), for its webhook. */
  onEnded?: (jobId: string) => Promise<void>;
  /** How a failure reads to the API's clients, stored as the job's error. */
  describeError: DescribeError;
}

/** How long a claim keeps other workers off a job that has not reached its provider yet. */
const LEASE_MS = 10 * 60 * 1000;
const MAX_ATTEMPTS = 3;
const RETRY_BASE_MS = 30_000;
const CONCURRENCY = 4;
/** How long after a job's end its webhook is requested by the sweep, if the worker that ended it did not. */
const WEBHOOK_GRACE_MS = 60_000;

/**
 * Works the jobs the read model says are due: claims a queued job (an event, so one worker wins), submits it to
 * its provider, polls submitted ones, and on completion stores the result, settles the hold and records the end.
 * The settlement comes before the completion event, so a crash between them repeats a settle (idempotent) rather
 * than leaving a finished job unbilled.
 */
export class JobWorker {
  private readonly busy = new Set<string>();
  constructor(private readonly deps: JobWorkerDeps) {}

  private kind(modality: string): JobKind | undefined {
    return (JOB_KINDS as Record<string, JobKind>)[modality] ?? this.deps.extraKinds?.[modality];
  }

  /** One pass over due work; resolves once every job it started has taken its step. */
  async tick(): Promise<void> {
    if (this.deps.onEnded) {
      for (const jobId of await jobsAwaitingWebhook(this.deps.pool, this.deps.clock(), WEBHOOK_GRACE_MS)) {
        await this.deps
          .onEnded(jobId)
          .catch((error) => this.deps.log(`job ${jobId} webhook: ${String(error)}`));
      }
    }
    const due = await dueJobs(this.deps.pool, this.deps.clock());
    const work = due.filter((job) => !this.busy.has(job.job_id));
    for (let i = 0; i < work.length; i += CONCURRENCY) {
      await Promise.all(
        work.slice(i, i + CONCURRENCY).map(async (job) => {
          this.busy.add(job.job_id);
          try {
            await this.step(job.job_id);
          } catch (error) {
            this.deps.log(`job ${job.job_id}: ${String(error)}`);
          } finally {
            this.busy.delete(job.job_id);
          }
        }),
      );
    }
  }

  private context() {
    return { now: this.deps.clock() };
  }

  private async step(jobId: string): Promise<void> {
    const history = await readJob(this.deps.store, jobId);
    if (!history) return;
    const kind = this.kind(history.queued.modality);
    if (!kind) return;
    const state = jobState(history);
    if (state.ended && state.cancelCharge !== 'pending') return;
    let target: Target;
    try {
      target = resolveJobModel(this.deps, kind, history.queued.model);
    } catch (error) {
      if (state.ended) {
        this.deps.log(`job ${jobId}: its cancellation cannot be charged: ${String(error)}`);
        return;
      }
      await this.fail(history, asJobError(error, this.deps.describeError));
      return;
    }
    const call: JobCall = {
      upstream: target.upstream,
      input: history.queued.input as JobInput,
      signal: AbortSignal.timeout(15 * 60 * 1000),
      allowPrivateUrls: allowPrivateUrls(this.deps.env),
      blobs: this.deps.blobs,
    };
    if (state.ended) {
      await this.chargeStrandedCancel(history, kind, target, call, state);
      return;
    }
    if (state.providerJobId) {
      const owner = ownerCall(this.deps, history.queued, target, call, state);
      if ('unusable' in owner) {
        const gone = new RequestRefused('upstream_failed', `The job cannot be followed: ${owner.unusable}.`);
        await this.fail(history, asJobError(gone, this.deps.describeError));
        return;
      }
      await this.poll(history, kind, target, owner.call, state.providerJobId, owner.credential);
      return;
    }
    const claim = await this.deps.commands
      .handle(
        jobId,
        { type: 'ClaimJob', now: this.deps.clock(), leaseMs: LEASE_MS, maxAttempts: MAX_ATTEMPTS },
        this.context(),
      )
      .catch((error) => {
        if (error instanceof DomainError) return undefined; // another worker took it, or it ended
        throw error;
      });
    const claimed = claim?.events.find((e) => e.type === 'JobClaimed');
    if (!claimed) {
      if (claim?.events.some((e) => e.type === 'JobFailed')) await this.ended(history);
      return;
    }
    const attempt = claimed.data.attempt;
    // The requester's own key or the pool's draw, recorded with the provider's id: the provider holds the job under it.
    let submitted: Submitted;
    try {
      submitted = await submitOnKey(this.deps, history.queued, target, call);
    } catch (error) {
      // A job cancelled while its submission failed never reached the provider's books: nothing is charged.
      if (await this.chargeIfCancelled(history, kind, target, { basis: 'not_taken' })) return;
      await this.attemptFailed(history, attempt, error);
      return;
    }
    const { submission, call: keyed, ...held } = submitted;
    const { credential } = held;
    try {
      if (submission.kind === 'done') {
        await this.complete(history, kind, target, submission.output, credential);
        return;
      }
      const providerJobId = submission.providerJobId;
      const recorded = { type: 'RecordSubmission', attempt, providerJobId, ...held } as const;
      await this.deps.commands.handle(jobId, recorded, this.context()).catch(async (error: unknown) => {
        // Cancelled (or taken by another worker) while the provider was being asked: nobody will poll the
        // provider's job, so it is asked to stop, as a cancellation that finds the submission recorded does; the
        // provider had the work, so a cancellation is charged its hold.
        if (!(error instanceof DomainError)) throw error;
        await stopAtProvider(target, keyed, providerJobId);
        await this.chargeIfCancelled(history, kind, target, { basis: 'hold', credential });
        throw error;
      });
    } catch (error) {
      if (error instanceof DomainError) return; // cancelled while the provider was being asked
      await this.attemptFailed(history, attempt, error);
    }
  }

  /** A passing failure queues the job for another attempt; any other fails it. */
  private async attemptFailed(history: JobHistory, attempt: number, error: unknown): Promise<void> {
    if (error instanceof UpstreamError && error.retryable) {
      const retryAt = new Date(this.deps.clock().getTime() + RETRY_BASE_MS * 2 ** (attempt - 1));
      await this.deps.commands
        .handle(
          history.queued.jobId,
          {
            type: 'RecordAttemptFailure',
            attempt,
            error: asJobError(error, this.deps.describeError),
            retryAt,
          },
          this.context(),
        )
        .catch(ignoreConflict);
      return;
    }
    await this.fail(history, asJobError(error, this.deps.describeError));
  }

  private async poll(
    history: JobHistory,
    kind: JobKind,
    target: Target,
    call: JobCall,
    providerJobId: string,
    credential: string | undefined,
  ) {
    if (!target.adapter.poll) return;
    let poll: Awaited<ReturnType<NonNullable<typeof target.adapter.poll>>>;
    try {
      poll = await target.adapter.poll(call, providerJobId);
    } catch (error) {
      // A passing failure is polled again on the next pass; a refusal ends the job.
      if (error instanceof UpstreamError && error.retryable) return;
      await this.fail(history, asJobError(error, this.deps.describeError));
      return;
    }
    if (poll.kind === 'pending') return;
    if (poll.kind === 'failed') {
      // The provider's words are recorded in an event: asJobError keeps a NUL in them from leaving it unfinished.
      const failed = new RequestRefused('upstream_failed', `The provider failed the job: ${poll.message}`);
      await this.fail(history, asJobError(failed, this.deps.describeError));
      return;
    }
    await this.complete(history, kind, target, poll.output, credential);
  }

  /**
   * Charges a cancellation after hand-off when the job is one (reading its stream afresh), and says whether it was.
   * The job's webhook, held back while the charge was pending, is requested once it is recorded.
   */
  private async chargeIfCancelled(
    history: JobHistory,
    kind: JobKind,
    target: Target,
    outcome: CancelOutcome,
  ): Promise<boolean> {
    const now = await readJob(this.deps.store, history.queued.jobId);
    if (!now || jobState(now).cancelCharge !== 'pending') return false;
    if (await chargeCancellation(this.deps, now, kind, target, outcome)) await this.ended(now);
    return true;
  }

  /**
   * A cancellation after hand-off whose charge nobody recorded: the cancelling request stopped before it (a submitted
   * job), or the worker submitting it is gone (its claim's lease ran out). The provider reports nothing once asked to
   * stop, so the hold is charged.
   */
  private async chargeStrandedCancel(
    history: JobHistory,
    kind: JobKind,
    target: Target,
    call: JobCall,
    state: ReturnType<typeof jobState>,
  ): Promise<void> {
    if (state.providerJobId) {
      // A credential no longer usable cannot reach the job to stop it; the provider has the work, so it is charged.
      const owner = ownerCall(this.deps, history.queued, target, call, state);
      if (!('unusable' in owner)) await stopAtProvider(target, owner.call, state.providerJobId);
    } else if (state.leaseUntil !== null && state.leaseUntil > this.deps.clock().toISOString()) return;
    await this.chargeIfCancelled(history, kind, target, { basis: 'hold' });
  }

  private async complete(
    history: JobHistory,
    kind: JobKind,
    target: Target,
    output: JobOutput,
    credential: string | undefined,
  ): Promise<void> {
    const job = history.queued;
    const stored = await storeResult(this.deps, job, output);
    // Cancelled meanwhile: the provider delivered, and billed, the work; the client gets the result it pays for.
    const delivered: CancelOutcome = { basis: 'provider_output', output, stored, credential };
    const now = await readJob(this.deps.store, job.jobId);
    if (!now || jobState(now).ended) {
      if (now) await this.chargeIfCancelled(now, kind, target, delivered);
      return;
    }
    const charge = jobCharge(linesOf(kind, target.model, output.units), credential);
    // What the job cost its requester: a sub-account's price of the charge.
    const charged = await settle(this.deps.spending, holdOf(this.deps.spending, job), target.model, {
      charge,
      usageReported: output.unitsReported,
      units: output.units,
      ...(credential !== undefined && { credential }),
    });
    const completed = await this.deps.commands
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
        this.context(),
      )
      .catch(ignoreConflict);
    if (completed) await this.ended(history);
    // Cancelled between the settlement and the completion: the charge settled above is the cancellation's.
    else await this.chargeIfCancelled(history, kind, target, delivered);
  }

  private async fail(history: JobHistory, error: z.infer<typeof JobError>): Promise<void> {
    const decision = await this.deps.commands.handle(
      history.queued.jobId,
      { type: 'FailJob', error },
      this.context(),
    );
    if (decision.events.length === 0) return;
    await release(this.deps.spending, holdOf(this.deps.spending, history.queued), 'failed');
    await this.ended(history);
  }

  private async ended(history: JobHistory): Promise<void> {
    if (history.queued.webhookUrl) await this.deps.onEnded?.(history.queued.jobId);
  }
}

function ignoreConflict(error: unknown): undefined {
  if (error instanceof DomainError) return undefined;
  throw error;
}

/** Where a job stands: whether it ended, and the provider's id of the current attempt. */
export function latest(history: JobHistory): { ended: boolean; providerJobId: string | null } {
  const { ended, providerJobId } = jobState(history);
  return { ended, providerJobId };
}
