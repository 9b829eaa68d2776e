import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import { RequestRefused } from '../../../contracts/errors.ts';
import type { BlobStore } from '../../../files/blob-store.ts';
import { cancelJob, jobFor } from '../../../jobs/cancel.ts';
import { JOB_KINDS, type JobKind } from '../../../jobs/kinds.ts';
import { AsyncJobRequest, JobParams } from '../../../jobs/request.ts';
import { type JobsDeps, submitJob } from '../../../jobs/service.ts';
import { jobView } from '../../../jobs/view.ts';
import { latest } from '../../../jobs/worker.ts';
import { DEFAULT_EXPIRES_IN, MAX_EXPIRES_IN, type MediaUrls } from '../../../media/signed-urls.ts';
import { callContext } from '../../served.ts';

export interface JobRouteDeps extends JobsDeps {
  media: MediaUrls;
  blobs: BlobStore;
  extraKinds?: Readonly<Record<string, JobKind>>;
  /** Whether a job's webhook was delivered (undefined until the delivery system knows). */
  webhookDelivered?: (jobId: string) => Promise<boolean | null>;
  /** Called once a job has ended, for its webhook. */
  onEnded?: (jobId: string) => Promise<void>;
  /** Whether a file was deleted through the Files API (a job's result may be). */
  fileDeleted?: (fileId: string) => Promise<boolean>;
}

const SignedQuery = z.object({
  expires_in: z.coerce
    .number({ error: "'expires_in' must be a whole number of seconds" })
    .int("'expires_in' must be a whole number of seconds")
    .min(1, "'expires_in' must be at least 1 second")
    .max(MAX_EXPIRES_IN, `'expires_in' must be at most ${MAX_EXPIRES_IN} seconds (7 days)`)
    .default(DEFAULT_EXPIRES_IN),
});

/** The asynchronous generation endpoints (202 and a job), the job itself, and signed URLs for its result. */
export const jobRoutes =
  (deps: JobRouteDeps, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    for (const kind of Object.values(JOB_KINDS)) {
      app.post(
        kind.path.replace(/^\/v1/, ''),
        { schema: { body: AsyncJobRequest } },
        async (request, reply) => {
          const accepted = await submitJob(deps, callContext(request, reply, live), kind, request.body);
          return reply.code(202).send(accepted);
        },
      );
    }

    // A result the client deleted is gone from the job too: no id of a deleted file, no URL that answers 404.
    const view = async (jobId: string, history: Awaited<ReturnType<typeof jobFor>>) => {
      const job = jobView(history, deps.media, (await deps.webhookDelivered?.(jobId)) ?? null);
      if (job.result_file_id && (await deps.fileDeleted?.(job.result_file_id))) {
        job.result_file_id = null;
        job.result_url = null;
      }
      return job;
    };

    app.get('/jobs/:id', { schema: { params: JobParams } }, async (request) => {
      const history = await jobFor(deps, request.auth, request.params.id);
      return view(request.params.id, history);
    });

    app.delete('/jobs/:id', { schema: { params: JobParams } }, async (request) => {
      const history = await cancelJob(deps, request.auth, request.params.id, deps.extraKinds);
      await deps.onEnded?.(request.params.id);
      return view(request.params.id, history);
    });

    app.get(
      '/files/jobs/:jobId/:filename/signed',
      {
        schema: {
          params: z.object({ jobId: z.string().min(1).max(200), filename: z.string().min(1).max(200) }),
          querystring: SignedQuery,
        },
      },
      async (request) => {
        const { jobId, filename } = request.params;
        const history = await jobFor(deps, request.auth, jobId);
        if (latest(history).ended === false || !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(filename)) {
          throw new RequestRefused('not_found', `Job '${jobId}' has no file '${filename}'`);
        }
        const key = `jobs/${jobId}/${filename}`;
        if ((await deps.blobs.size(key)) === undefined) {
          throw new RequestRefused('not_found', `Job '${jobId}' has no file '${filename}'`);
        }
        return deps.media.sign(key, request.query.expires_in);
      },
    );
  };
