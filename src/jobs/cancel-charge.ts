import { DomainError } from '../../commands/errors.ts';
import { evolve, initialState, type JobState } from '../../commands/job/decide.ts';
import type { JobCall, JobInput, JobOutput } from '../contracts/jobs.ts';
import { type Cancellation, chargeCancelled } from '../pipeline/deferred.ts';
import type { JobKind } from './kinds.ts';
import { type JobHistory, type JobsDeps, type Target, workOf } from './service.ts';

/** A job's state as its decider folds it: whether it ended, its provider id, a cancellation's charge. */
export function jobState(history: JobHistory): JobState & { ended: boolean } {
  const state = history.events.reduce((s, { event }) => evolve(s, event), initialState());
  const ended = state.status === 'completed' || state.status === 'failed' || state.status === 'cancelled';
  return { ...state, ended };
}

/** A result the provider delivered, stored under the job. */
export interface StoredResult {
  fileId: string;
  filename: string;
}

/**
 * How a cancellation after hand-off is charged: the units the provider delivered (`provider_output`), the held
 * worst case when the provider has the work and reports nothing once asked to stop (`hold`), or nothing when the
 * provider never took it (`not_taken`). `credential`: the one the work went out on, when the job's stream does not
 * record it yet (a submission answered, or accepted, while the job was being cancelled).
 */
export type CancelOutcome =
  | {
      basis: 'provider_output';
      output: JobOutput;
      stored: StoredResult | undefined;
      credential?: string | undefined;
    }
  | { basis: 'hold'; credential?: string | undefined }
  | { basis: 'not_taken' };

/**
 * Settles (or releases) a cancelled job's hold as the outcome says (the pipeline's deferred call), then records what
 * was charged. The settlement comes first, as a completion's does: a crash between the two repeats an idempotent
 * settle. Resolves true when this call recorded the charge (false when another worker or request already had).
 */
export async function chargeCancellation(
  deps: JobsDeps,
  history: JobHistory,
  kind: JobKind,
  target: Target,
  outcome: CancelOutcome,
): Promise<boolean> {
  const job = history.queued;
  const { chargedNanos, units } = await chargeCancelled(
    deps.spending,
    job,
    cancellation(history, kind, target, outcome),
  );
  const stored = outcome.basis === 'provider_output' ? outcome.stored : undefined;
  const recorded = await deps.commands
    .handle(
      job.jobId,
      {
        type: 'RecordCancelCharge',
        charge: {
          chargedNanos: chargedNanos.toString(),
          units,
          basis: outcome.basis,
          resultFileId: stored?.fileId ?? null,
          resultFilename: stored?.filename ?? null,
        },
      },
      { now: deps.clock() },
    )
    .catch((error: unknown) => {
      if (error instanceof DomainError) return undefined;
      throw error;
    });
  return recorded !== undefined && recorded.events.length > 0;
}

/** The outcome as the pipeline charges it: the units held or delivered, on the credential the work went out on. */
function cancellation(
  history: JobHistory,
  kind: JobKind,
  target: Target,
  outcome: CancelOutcome,
): Cancellation {
  if (outcome.basis === 'not_taken') return outcome;
  const work = workOf(kind, target.model);
  const credential = outcome.credential ?? jobState(history).credential;
  if (outcome.basis === 'hold')
    return {
      basis: 'hold',
      work,
      units: target.adapter.heldUnits(history.queued.input as JobInput),
      credential,
    };
  const { units, unitsReported } = outcome.output;
  return { basis: 'provider_output', work, units, usageReported: unitsReported, credential };
}

/** Asks the provider to stop; best effort: a provider that cannot stop still has the work, which is charged. */
export async function stopAtProvider(target: Target, call: JobCall, providerJobId: string): Promise<void> {
  try {
    await target.adapter.cancel?.({ ...call, signal: AbortSignal.timeout(30_000) }, providerJobId);
  } catch {
    // The job is cancelled here whatever the provider says.
  }
}
