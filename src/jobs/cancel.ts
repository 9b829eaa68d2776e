import type { KeyHolder } from '../accounts/live-state.ts';
import { RequestRefused } from '../contracts/errors.ts';
import type { JobInput } from '../contracts/jobs.ts';
import type { BlobStore } from '../files/blob-store.ts';
import { allowPrivateUrls } from '../net/url-guard.ts';
import { release } from '../pipeline/ledger.ts';
import { JOB_KINDS, type JobKind } from './kinds.ts';
import { holdOf, type JobHistory, type JobsDeps, mayRead, readJob, resolveJobModel } from './service.ts';
import { latest } from './worker.ts';

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
 * Cancels a job that has not finished: the cancellation is recorded (so no worker completes it afterwards), its
 * hold is released, and the provider is asked to stop when the work had reached it (best effort: a provider that
 * cannot stop may still bill the gateway, which the client does not pay). A finished job is a 409.
 */
export async function cancelJob(
  deps: JobsDeps & { blobs: BlobStore },
  auth: KeyHolder,
  jobId: string,
  extraKinds: Readonly<Record<string, JobKind>> = {},
): Promise<JobHistory> {
  const history = await jobFor(deps, auth, jobId);
  const providerJobId = latest(history).providerJobId;
  await deps.commands.handle(jobId, { type: 'CancelJob' }, { now: deps.clock() });
  await release(deps.spending, holdOf(deps.spending, history.queued), 'cancelled');
  const kind =
    (JOB_KINDS as Record<string, JobKind>)[history.queued.modality] ?? extraKinds[history.queued.modality];
  if (providerJobId && kind) {
    try {
      const target = resolveJobModel(deps, kind, history.queued.model);
      await target.adapter.cancel?.(
        {
          upstream: target.upstream,
          input: history.queued.input as JobInput,
          signal: AbortSignal.timeout(30_000),
          allowPrivateUrls: allowPrivateUrls(deps.env),
          blobs: deps.blobs,
        },
        providerJobId,
      );
    } catch {
      // Best effort: the job is cancelled here whatever the provider says.
    }
  }
  return (await readJob(deps.store, jobId)) ?? history;
}
