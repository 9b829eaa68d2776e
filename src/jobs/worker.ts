import type pg from 'pg';
import { DomainError } from '../../commands/errors.ts';
import { dueJobs, jobsAwaitingWebhook } from '../../projections/jobs/index.ts';
import { RequestRefused } from '../contracts/errors.ts';
import type { JobCall, JobInput } from '../contracts/jobs.ts';
import { allowPrivateUrls } from '../net/url-guard.ts';
import { UpstreamError } from '../providers/errors.ts';
import { jobState, stopAtProvider } from './cancel-charge.ts';
import { ownerCall, type Submitted, submitOnKey } from './credential.ts';
import {
  chargeIfCancelled,
  chargeStrandedCancel,
  completeJob,
  failJob,
  ignoreConflict,
  type JobEndingDeps,
  notifyEnded,
} from './ending.ts';
import { asJobError, followUpFailure } from './job-error.ts';
import { JOB_KINDS, type JobKind } from './kinds.ts';
import { type JobHistory, readJob, resolveJobModel, type Target } from './service.ts';

export interface JobWorkerDeps extends JobEndingDeps {
  pool: pg.Pool;
  log: (line: string) => void;
  /** Kinds beyond the generation endpoints' own (async transcription). */
  extraKinds?: Readonly<Record<string, JobKind>>;
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
 * its provider, polls submitted ones, and ends them (src/jobs/ending.ts: a completion settles the hold before it is
 * recorded, a failure releases it, a cancellation met along the way is charged).
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
      await this.fail(history, error);
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
      await chargeStrandedCancel(this.deps, history, kind, target, call, state);
      return;
    }
    if (state.providerJobId) {
      const owner = ownerCall(this.deps, history.queued, target, call, state);
      if ('unusable' in owner) {
        const gone = new RequestRefused('upstream_failed', `The job cannot be followed: ${owner.unusable}.`);
        await this.fail(history, gone);
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
      if (claim?.events.some((e) => e.type === 'JobFailed')) await notifyEnded(this.deps, history);
      return;
    }
    const attempt = claimed.data.attempt;
    // The requester's own key or the pool's draw, recorded with the provider's id: the provider holds the job under it.
    let submitted: Submitted;
    try {
      submitted = await submitOnKey(this.deps, history.queued, target, call);
    } catch (error) {
      // A job cancelled while its submission failed never reached the provider's books: nothing is charged.
      if (await chargeIfCancelled(this.deps, history, kind, target, { basis: 'not_taken' })) return;
      await this.attemptFailed(history, attempt, error);
      return;
    }
    const { submission, call: keyed, ...held } = submitted;
    const { credential } = held;
    try {
      if (submission.kind === 'done') {
        await completeJob(this.deps, history, kind, target, submission.output, credential);
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
        await chargeIfCancelled(this.deps, history, kind, target, { basis: 'hold', credential });
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
            error: asJobError(error, this.deps.describeError, history.queued.model),
            retryAt,
          },
          this.context(),
        )
        .catch(ignoreConflict);
      return;
    }
    await this.fail(history, error);
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
      await this.fail(history, followUpFailure(error));
      return;
    }
    if (poll.kind === 'pending') return;
    if (poll.kind === 'failed') {
      // The provider's words are recorded in an event: asJobError keeps a NUL in them from leaving it unfinished.
      const failed = new RequestRefused('upstream_failed', `The provider failed the job: ${poll.message}`);
      await this.fail(history, failed);
      return;
    }
    await completeJob(this.deps, history, kind, target, poll.output, credential);
  }

  /** Fails the job with the error as the API's clients read it; its hold is released. */
  private fail(history: JobHistory, error: unknown): Promise<void> {
    return failJob(this.deps, history, asJobError(error, this.deps.describeError, history.queued.model));
  }
}

/** Where a job stands: whether it ended, and the provider's id of the current attempt. */
export function latest(history: JobHistory): { ended: boolean; providerJobId: string | null } {
  const { ended, providerJobId } = jobState(history);
  return { ended, providerJobId };
}
