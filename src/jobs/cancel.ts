import type { KeyHolder } from '../accounts/live-state.ts';
import { RequestRefused } from '../contracts/errors.ts';
import type { JobInput } from '../contracts/jobs.ts';
import type { BlobStore } from '../files/blob-store.ts';
import { allowPrivateUrls } from '../net/url-guard.ts';
import { chargeCancelled } from '../pipeline/deferred.ts';
import { chargeCancellation, stopAtProvider } from './cancel-charge.ts';
import { ownerCall } from './credential.ts';
import { JOB_KINDS, type JobKind } from './kinds.ts';
import { type JobHistory, type JobsDeps, mayRead, readJob, resolveJobModel } from './service.ts';

/** A job the key may see, or a 404 that does not say whether it exists for someone else. */
export async function jobFor(
  deps: Pick<JobsDeps, 'store'>,
  auth: KeyHolder,
  jobId: string,
): Promise<JobHistory> {
  const history = await readJob(deps.store, jobId);
  if (!history || !mayRead(auth, history.queued)) {
    throw new RequestRefused('not_found', `No job with id '${jobId}'`);
  }
  return history;
}

/**
 * Cancels a job that has not finished; a finished job is a 409. The cancellation is recorded first, so no worker
 * completes the job afterwards. Before a worker took it, nothing reached the provider: the hold is released. After,
 * the provider has the work (or is being given it) and may bill it whatever the gateway asks, so the job is charged
 * as the provider bills it: a submitted job is asked to stop and charged its hold here (no provider reports what a
 * stopped job cost); one whose submission is in flight is charged by the worker once the provider answers.
 */
export async function cancelJob(
  deps: JobsDeps & { blobs: BlobStore },
  auth: KeyHolder,
  jobId: string,
  extraKinds: Readonly<Record<string, JobKind>> = {},
): Promise<JobHistory> {
  const history = await jobFor(deps, auth, jobId);
  const decision = await deps.commands.handle(jobId, { type: 'CancelJob' }, { now: deps.clock() });
  const cancelled = decision.events.find((e) => e.type === 'JobCancelled');
  if (!cancelled?.data.billable) {
    await chargeCancelled(deps.spending, history.queued, { basis: 'before_handoff' });
  } else if (decision.state.providerJobId) {
    const kind =
      (JOB_KINDS as Record<string, JobKind>)[history.queued.modality] ?? extraKinds[history.queued.modality];
    // A model no longer servable (its provider's key removed) leaves the charge to the worker's sweep, which logs it.
    const target = kind && tryResolve(deps, kind, history.queued.model);
    if (kind && target) {
      const call = {
        upstream: target.upstream,
        input: history.queued.input as JobInput,
        signal: AbortSignal.timeout(30_000),
        allowPrivateUrls: allowPrivateUrls(deps.env),
        blobs: deps.blobs,
      };
      // Asked on the credential the provider holds the job under; one no longer usable cannot reach it.
      const owner = ownerCall(deps, history.queued, target, call, decision.state);
      if (!('unusable' in owner)) await stopAtProvider(target, owner.call, decision.state.providerJobId);
      await chargeCancellation(deps, history, kind, target, {
        basis: 'hold',
        credential: decision.state.credential,
      });
    }
  }
  return (await readJob(deps.store, jobId)) ?? history;
}

function tryResolve(deps: JobsDeps, kind: JobKind, model: string) {
  try {
    return resolveJobModel(deps, kind, model);
  } catch {
    return undefined;
  }
}
