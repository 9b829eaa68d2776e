import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import { batchEndpoint } from '../../../batches/input.ts';
import type { BatchService } from '../../../batches/service.ts';
import { isValidTag, requestTag } from '../../../chat/request.ts';
import { RequestRefused } from '../../../contracts/errors.ts';
import { queryInteger } from '../../query.ts';

const Id = z.object({ id: z.string().min(1).max(200) });
const CreateBatch = z.object({
  input_file_id: z.string().min(1),
  // Written with or without the version prefix, as clients do; kept with it.
  endpoint: z
    .enum(['/v1/chat/completions', '/chat/completions', '/v1/embeddings', '/embeddings'], {
      error: 'batches run /v1/chat/completions or /v1/embeddings',
    })
    .transform((endpoint) => batchEndpoint(endpoint)),
  completion_window: z.literal('24h', { error: 'only 24h is supported' }).default('24h'),
  // OpenAI's bounds: at most 16 pairs, keys up to 64 characters, values up to 512.
  metadata: z
    .record(z.string().max(64), z.string().max(512))
    .refine((m) => Object.keys(m).length <= 16, 'at most 16 keys')
    .nullable()
    .optional(),
});
const ListQuery = z.object({
  limit: queryInteger(1, 100).default(20),
  after: z.string().min(1).optional(),
});

/** OpenAI's Batch API over the chat-completions endpoint, at half price. */
export const batchesRoutes =
  (batches: BatchService, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    app.post('/batches', { schema: { body: CreateBatch } }, (request) => {
      const tagHeader = request.headers['x-gw-tag'];
      if (!isValidTag(tagHeader)) {
        throw new RequestRefused('invalid', "'x-gw-tag': 1 to 128 printable characters");
      }
      const sub = request.auth.subAccountId ? live.subAccount(request.auth.subAccountId) : undefined;
      const tag = requestTag(tagHeader, sub?.defaultTag ?? null);
      return batches.create(request.auth, request.body, tag, request.id);
    });
    app.get('/batches', { schema: { querystring: ListQuery } }, (request) =>
      batches.list(request.auth, request.query),
    );
    app.get('/batches/:id', { schema: { params: Id } }, (request) =>
      batches.get(request.auth, request.params.id),
    );
    app.post('/batches/:id/cancel', { schema: { params: Id } }, (request) =>
      batches.cancel(request.auth, request.params.id, request.id),
    );
  };
