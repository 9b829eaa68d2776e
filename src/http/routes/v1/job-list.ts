import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { listJobs } from '../../../../projections/jobs/list.ts';
import type { Sql } from '../../../../projections/types.ts';
import { queryInteger } from '../../query.ts';

const ListQuery = z.object({
  limit: queryInteger(1, 100).default(20),
  after: z.string().min(1).max(200).optional(),
  status: z.enum(['queued', 'processing', 'completed', 'failed']).optional(),
});

const seconds = (at: Date) => Math.floor(at.getTime() / 1000);
/** The API's states have no `cancelled`: a cancelled job reads as failed, as `GET /v1/jobs/{id}` shows it. */
const apiStatus = (status: string) => (status === 'cancelled' ? 'failed' : status);

/**
 * The account's jobs, newest first, from the jobs read model (a job just submitted appears once the model has
 * caught up); a sub-account key sees only its own. The whole record of one is `GET /v1/jobs/{id}`.
 */
export const jobListRoutes =
  (sql: Sql): FastifyPluginAsyncZod =>
  async (app) => {
    app.get('/jobs', { schema: { querystring: ListQuery } }, async (request) => {
      const { limit, after, status } = request.query;
      const rows = await listJobs(
        sql,
        { accountId: request.auth.accountId, subAccountId: request.auth.subAccountId },
        {
          limit,
          ...(after !== undefined && { after }),
          ...(status !== undefined && { statuses: status === 'failed' ? ['failed', 'cancelled'] : [status] }),
        },
      );
      const data = rows.slice(0, limit).map((row) => ({
        id: row.job_id,
        object: 'job' as const,
        status: apiStatus(row.status),
        modality: row.modality,
        model: row.model,
        sub_account_id: row.sub_account_id,
        created_at: seconds(row.created_at),
        updated_at: seconds(row.updated_at),
      }));
      return { object: 'list', data, has_more: rows.length > limit, last_id: data.at(-1)?.id ?? null };
    });
  };
