import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import type { ResponseCache } from '../../../cache/cache.ts';
import { embeddingsCache } from '../../../modalities/embeddings/cached.ts';
import { EmbeddingsRequest } from '../../../modalities/embeddings/request.ts';
import { createEmbeddings } from '../../../modalities/embeddings/service.ts';
import { cachedCall } from '../../../pipeline/cached.ts';
import type { ModalityDeps } from '../../../pipeline/priced.ts';
import { callContext } from '../../served.ts';

export const embeddingsRoutes =
  (deps: ModalityDeps & { cache?: ResponseCache }, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    app.post('/embeddings', { schema: { body: EmbeddingsRequest } }, async (request, reply) => {
      const context = callContext(request, reply, live);
      const call = await cachedCall(
        deps,
        context,
        {
          ...embeddingsCache(deps.cache, deps, context, request.body),
          serve: () => createEmbeddings(deps, context, request.body),
          kept: (served) => ({ outcome: served, answer: served.result }),
        },
        (headers) => {
          reply.headers(headers);
        },
      );
      return call.hit ? call.answer : call.served.result;
    });
  };
