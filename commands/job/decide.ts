import type { z } from 'zod';
import type { JobCancelCharged, JobError, JobEvent, JobQueued } from '../../events/job.ts';
import { DomainError } from '../errors.ts';

export type JobStatus = 'none' | 'queued' | 'processing' | 'completed' | 'failed' | 'cancelled';

export interface JobState {
  jobId: string;
  status: JobStatus;
  attempt: number;
  /** When the current attempt's claim runs out (processing, not yet submitted). */
  leaseUntil: string | null;
  providerJobId: string | null;
  /** The pool credential the provider holds the submitted job under (absent: the provider's single key). */
  credential?: string | undefined;
  /** The requester's own provider key it is held under, by id, when `credential` is `byok:<name>`. */
  providerKeyId?: string | undefined;
  /** When a queued job may be tried again after a failed attempt. */
  retryAt: string | null;
  /** A cancellation after hand-off: its charge is still to be recorded (`pending`) or was (`charged`). */
  cancelCharge: 'none' | 'pending' | 'charged';
}

export function initialState(): JobState {
  return {
    jobId: '',
    status: 'none',
    attempt: 0,
    leaseUntil: null,
    providerJobId: null,
    retryAt: null,
    cancelCharge: 'none',
  };
}

export function evolve(state: JobState, event: JobEvent): JobState {
  switch (event.type) {
    case 'JobQueued':
      return { ...state, jobId: event.data.jobId, status: 'queued' };
    case 'JobClaimed':
      return {
        ...state,
        status: 'processing',
        attempt: event.data.attempt,
        leaseUntil: event.data.leaseUntil,
        providerJobId: null,
        credential: undefined,
        providerKeyId: undefined,
        retryAt: null,
      };
    case 'JobSubmitted':
      return {
        ...state,
        providerJobId: event.data.providerJobId,
        credential: event.data.credential,
        providerKeyId: event.data.providerKeyId,
        leaseUntil: null,
      };
    case 'JobAttemptFailed':
      return {
        ...state,
        status: 'queued',
        leaseUntil: null,
        providerJobId: null,
        retryAt: event.data.retryAt,
      };
    case 'JobCompleted':
      return { ...state, status: 'completed', leaseUntil: null };
    case 'JobFailed':
      return { ...state, status: 'failed', leaseUntil: null };
    case 'JobCancelled':
      // The claim's lease stays: a cancellation whose submission is in flight is charged by that worker, or by
      // another once the lease has run out.
      return { ...state, status: 'cancelled', cancelCharge: event.data.billable ? 'pending' : 'none' };
    case 'JobCancelCharged':
      return { ...state, cancelCharge: 'charged' };
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}

export type JobCommand =
  | { type: 'QueueJob'; job: z.infer<typeof JobQueued> }
  /** Take the job for its next attempt, or fail it when the attempts are used up. */
  | { type: 'ClaimJob'; now: Date; leaseMs: number; maxAttempts: number }
  | {
      type: 'RecordSubmission';
      attempt: number;
      providerJobId: string;
      credential?: string | undefined;
      providerKeyId?: string | undefined;
    }
  | { type: 'RecordAttemptFailure'; attempt: number; error: z.infer<typeof JobError>; retryAt: Date }
  | {
      type: 'CompleteJob';
      resultFileId: string | null;
      resultFilename: string | null;
      resultBytes: number | null;
      result: Record<string, unknown> | null;
      chargedNanos: bigint;
      units: number;
    }
  | { type: 'FailJob'; error: z.infer<typeof JobError> }
  | { type: 'CancelJob' }
  /** What a cancellation after hand-off was charged, once the hold is settled or released. */
  | { type: 'RecordCancelCharge'; charge: Omit<z.infer<typeof JobCancelCharged>, 'jobId'> };

const finished = (status: JobStatus) =>
  status === 'completed' || status === 'failed' || status === 'cancelled';

/** Reads the way the API shows it: a cancelled job is a failed one. */
const shown = (status: JobStatus) => (status === 'cancelled' ? 'cancelled (failed)' : status);

export function decide(command: JobCommand, state: JobState): JobEvent[] {
  if (command.type === 'QueueJob') {
    return state.status === 'none' ? [{ type: 'JobQueued', data: command.job }] : [];
  }
  if (state.status === 'none') throw new DomainError('not_found', 'No such job');
  const jobId = state.jobId;
  switch (command.type) {
    case 'ClaimJob': {
      const now = command.now.toISOString();
      const due =
        (state.status === 'queued' && (state.retryAt === null || state.retryAt <= now)) ||
        (state.status === 'processing' &&
          state.providerJobId === null &&
          state.leaseUntil !== null &&
          state.leaseUntil <= now);
      if (!due)
        throw new DomainError('conflict', `The job is ${shown(state.status)} and not due for an attempt`);
      if (state.attempt >= command.maxAttempts) {
        return [
          {
            type: 'JobFailed',
            data: {
              jobId,
              error: {
                message: `The provider did not take the job after ${state.attempt} attempts`,
                type: 'provider_error',
                code: 502,
              },
            },
          },
        ];
      }
      const leaseUntil = new Date(command.now.getTime() + command.leaseMs).toISOString();
      return [{ type: 'JobClaimed', data: { jobId, attempt: state.attempt + 1, leaseUntil } }];
    }
    case 'RecordSubmission':
      if (
        state.status !== 'processing' ||
        state.attempt !== command.attempt ||
        state.providerJobId !== null
      ) {
        throw new DomainError('conflict', `Attempt ${command.attempt} no longer holds the job`);
      }
      return [
        {
          type: 'JobSubmitted',
          data: {
            jobId,
            attempt: command.attempt,
            providerJobId: command.providerJobId,
            ...(command.credential !== undefined && { credential: command.credential }),
            ...(command.providerKeyId !== undefined && { providerKeyId: command.providerKeyId }),
          },
        },
      ];
    case 'RecordAttemptFailure':
      if (state.status !== 'processing' || state.attempt !== command.attempt) {
        throw new DomainError('conflict', `Attempt ${command.attempt} no longer holds the job`);
      }
      return [
        {
          type: 'JobAttemptFailed',
          data: {
            jobId,
            attempt: command.attempt,
            error: command.error,
            retryAt: command.retryAt.toISOString(),
          },
        },
      ];
    case 'CompleteJob':
      if (state.status !== 'processing') {
        throw new DomainError('conflict', `The job is ${shown(state.status)}; it cannot complete`);
      }
      return [
        {
          type: 'JobCompleted',
          data: {
            jobId,
            resultFileId: command.resultFileId,
            resultFilename: command.resultFilename,
            resultBytes: command.resultBytes,
            result: command.result,
            chargedNanos: command.chargedNanos.toString(),
            units: command.units,
          },
        },
      ];
    case 'FailJob':
      if (finished(state.status)) return [];
      return [{ type: 'JobFailed', data: { jobId, error: command.error } }];
    case 'CancelJob':
      if (finished(state.status)) {
        throw new DomainError(
          'conflict',
          `The job has already ${state.status === 'completed' ? 'completed' : 'ended'}; there is nothing to cancel`,
        );
      }
      // Once a worker has claimed the job, the provider has the work or is being given it, and may bill it.
      return [
        {
          type: 'JobCancelled',
          data: {
            jobId,
            wasSubmitted: state.providerJobId !== null,
            billable: state.status === 'processing',
          },
        },
      ];
    case 'RecordCancelCharge':
      if (state.cancelCharge !== 'pending') {
        throw new DomainError('conflict', 'The job has no cancellation charge to record');
      }
      return [{ type: 'JobCancelCharged', data: { jobId, ...command.charge } }];
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
}
