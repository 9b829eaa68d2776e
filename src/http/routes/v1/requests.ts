import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { listRequests } from '../../../../projections/requests/queries.ts';
import type { Sql } from '../../../../projections/types.ts';
import { RequestRefused } from '../../../contracts/errors.ts';
import type { BlobStore } from '../../../files/blob-store.ts';
import { findRequestForReader, loggedBodies, loggedRequest } from '../../../requests/lookup.ts';
import { requestView } from '../../../requests/view.ts';
import { queryInteger } from '../../query.ts';

/** A time bound: an ISO 8601 date-time, or a Unix timestamp in seconds as OpenAI's usage queries take. */
const Instant = z.string().transform((text, context) => {
  const when = /^\d+$/.test(text) ? new Date(Number(text) * 1000) : new Date(text);
  if (text.trim() === '' || Number.isNaN(when.getTime())) {
    context.addIssue({ code: 'custom', message: 'an ISO 8601 date-time or a Unix timestamp in seconds' });
    return z.NEVER;
  }
  return when;
});

const ListQuery = z.object({
  limit: queryInteger(1, 100).default(20),
  after: z.string().min(1).optional(),
  client_request_id: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  tag: z.string().min(1).optional(),
  status: queryInteger(100, 599).optional(),
  sub_account_id: z.string().min(1).optional(),
  from: Instant.optional(),
  to: Instant.optional(),
});

/**
 * The request log: an account reads its own requests and its sub-accounts' (but for the lines of their batches), a
 * sub-account key only its sub-account's. Another owner's id is a 404, as an unknown one.
 */
export const requestsRoutes =
  (sql: Sql, blobs: BlobStore, keyName: (keyId: string) => string | undefined): FastifyPluginAsyncZod =>
  async (app) => {
    app.get('/requests', { schema: { querystring: ListQuery } }, async (request) => {
      const q = request.query;
      const rows = await listRequests(
        sql,
        { accountId: request.auth.accountId, subAccountId: request.auth.subAccountId },
        {
          limit: q.limit,
          ...(q.after !== undefined && { after: q.after }),
          ...(q.client_request_id !== undefined && { clientRequestId: q.client_request_id }),
          ...(q.model !== undefined && { model: q.model }),
          ...(q.tag !== undefined && { tag: q.tag }),
          ...(q.status !== undefined && { status: q.status }),
          ...(q.sub_account_id !== undefined && { subAccountId: q.sub_account_id }),
          ...(q.from !== undefined && { from: q.from }),
          ...(q.to !== undefined && { to: q.to }),
        },
      );
      const data = rows.slice(0, q.limit).map((row) => requestView(loggedRequest(row), keyName));
      return {
        object: 'list',
        data,
        has_more: rows.length > q.limit,
        last_id: data.at(-1)?.id ?? null,
      };
    });

    app.get('/requests/:id', { schema: { params: z.object({ id: z.string().min(1) }) } }, async (request) => {
      const logged = await findRequestForReader(
        sql,
        { accountId: request.auth.accountId, subAccountId: request.auth.subAccountId },
        request.params.id,
      );
      if (!logged) throw new RequestRefused('not_found', `No request ${request.params.id}`);
      const bodies = await loggedBodies({ sql, blobs }, logged);
      return {
        ...requestView(logged, keyName),
        request_body: bodies?.request ?? null,
        response_body: bodies?.response ?? null,
      };
    });
  };
