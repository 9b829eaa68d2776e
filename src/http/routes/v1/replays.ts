import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import type { ReplayService } from '../../../replays/service.ts';
import { queryInteger } from '../../query.ts';
import { callContext } from '../../served.ts';

const Id = z.object({ id: z.string().min(1).max(200) });
const CreateReplay = z.object({
  source_request_id: z.string().min(1).max(200),
  target_model: z.string().min(1).max(200),
  shadow: z.boolean().default(false),
  sample_rate: z.number().gt(0).max(1).optional(),
  max_requests: z.number().int().min(1).max(100_000).optional(),
});
const ListQuery = z.object({
  limit: queryInteger(1, 100).default(20),
  after: z.string().min(1).optional(),
});

/** Replays of logged requests against another model, once or as a live shadow ([replays.md](docs/replays.md)). */
export const replaysRoutes =
  (replays: ReplayService, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    app.post('/replays', { schema: { body: CreateReplay } }, (request, reply) =>
      replays.create(callContext(request, reply, live), request.body),
    );
    app.get('/replays', { schema: { querystring: ListQuery } }, (request) =>
      replays.list(request.auth, request.query),
    );
    app.get('/replays/:id', { schema: { params: Id } }, (request) =>
      replays.get(request.auth, request.params.id),
    );
    app.delete('/replays/:id', { schema: { params: Id } }, (request) =>
      replays.stop(request.auth, request.params.id, request.id),
    );
  };
