import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { CreateEvalRequest } from '../../../evals/request.ts';
import type { EvalService } from '../../../evals/service.ts';
import { queryInteger } from '../../query.ts';

const Id = z.object({ id: z.string().min(1).max(200) });
const ListQuery = z.object({
  limit: queryInteger(1, 100).default(20),
  after: z.string().min(1).optional(),
});
const ItemsQuery = ListQuery.extend({
  run: queryInteger(1, Number.MAX_SAFE_INTEGER).optional(),
  model: z.string().min(1).max(200).optional(),
});

/** Evals of candidate models over a dataset, and their winners ([evals.md](docs/evals.md)). */
export const evalsRoutes =
  (evals: EvalService): FastifyPluginAsyncZod =>
  async (app) => {
    app.post('/evals', { schema: { body: CreateEvalRequest } }, (request) =>
      evals.create(request.auth, request.id, request.headers['x-gw-tag'], request.body),
    );
    app.get('/evals', { schema: { querystring: ListQuery } }, (request) =>
      evals.list(request.auth, request.query),
    );
    app.get('/evals/:id', { schema: { params: Id } }, (request) =>
      evals.get(request.auth, request.params.id),
    );
    app.get('/evals/:id/items', { schema: { params: Id, querystring: ItemsQuery } }, (request) =>
      evals.items(request.auth, request.params.id, request.query),
    );
    app.post('/evals/:id/cancel', { schema: { params: Id } }, (request) =>
      evals.cancel(request.auth, request.params.id, request.id),
    );
    app.post('/evals/:id/rerun', { schema: { params: Id } }, (request) =>
      evals.rerun(request.auth, request.params.id, request.id),
    );
  };
