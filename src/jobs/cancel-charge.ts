import { DomainError } from '../../commands/errors.ts';
import { evolve, initialState, type JobState } from '../../commands/job/decide.ts';
import type { JobCall, JobInput, JobOutput } from '../contracts/jobs.ts';
import { release, settle } from '../pipeline/ledger.ts';
import { jobCharge } from './credential.ts';
import type { JobKind } from './kinds.ts';
import { holdOf, type JobHistory, type JobsDeps, linesOf, type Target } from './service.ts';

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
 * Settles (or releases) a cancelled job's hold as the outcome says, then records what was charged. The settlement
 * comes first, as a completion's does: a crash between the two repeats an idempotent settle. Resolves true when
 * this call recorded the charge (false when another worker or request already had).
 */
export async function chargeCancellation(
  deps: JobsDeps,
  history: JobHistory,
  kind: JobKind,
  target: Target,
  outcome: CancelOutcome,
): Promise<boolean> {
  const job = history.queued;
  const hold = holdOf(deps.spending, job);
  let chargedNanos = 0n;
  let units = 0;
  if (outcome.basis === 'not_taken') {
    await release(deps.spending, hold, 'cancelled');
  } else {
    units = outcome.basis === 'hold' ? target.adapter.heldUnits(job.input as JobInput) : outcome.output.units;
    const credential = outcome.credential ?? jobState(history).credential;
    // On the requester's own key, the provider bills the requester: the fee alone.
    const charge = jobCharge(linesOf(kind, target.model, units), credential);
    chargedNanos = await settle(deps.spending, hold, target.model, {
      ...(credential !== undefined && { credential }),
      charge,
      usageReported: outcome.basis === 'provider_output' && outcome.output.unitsReported,
      units,
    });
  }
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

/** Asks the provider to stop; best effort: a provider that cannot stop still has the work, which is charged. */
export async function stopAtProvider(target: Target, call: JobCall, providerJobId: string): Promise<void> {
  try {
    await target.adapter.cancel?.({ ...call, signal: AbortSignal.timeout(30_000) }, providerJobId);
  } catch {
    // The job is cancelled here whatever the provider says.
  }
}
