import type { MediaUrls } from '../media/signed-urls.ts';
import type { Webhooks } from '../webhooks/service.ts';
import { type JobsDeps, readJob } from './service.ts';
import { jobView } from './view.ts';

/** The webhook source of a job: one delivery per job, whatever the retries. */
export const jobSource = (jobId: string) => `job:${jobId}`;

/**
 * Sends `job.completed` or `job.failed` to the job's webhook_url, signed with the secret of the key that created
 * the job. `data` is the job as `GET /v1/jobs/{id}` shows it at its end (with a fresh hour-long result_url).
 * Asking twice for one job is one delivery.
 */
export async function notifyJobEnded(
  deps: Pick<JobsDeps, 'store'> & { media: MediaUrls },
  webhooks: Pick<Webhooks, 'request'>,
  jobId: string,
): Promise<void> {
  const history = await readJob(deps.store, jobId);
  if (!history?.queued.webhookUrl) return;
  const view = jobView(history, deps.media, false);
  if (view.status !== 'completed' && view.status !== 'failed') return;
  // A cancellation whose charge the provider's answer still decides is delivered once that charge is recorded.
  if (view.cancellation?.charge === 'pending') return;
  const { webhook_delivered: _unknownYet, ...data } = view;
  await webhooks.request({
    accountId: history.queued.accountId,
    keyId: history.queued.keyId,
    url: history.queued.webhookUrl,
    type: view.status === 'completed' ? 'job.completed' : 'job.failed',
    data,
    source: jobSource(jobId),
    occurredAt: history.events.at(-1)?.at,
  });
}
