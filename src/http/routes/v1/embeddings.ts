import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import type { ResponseCache } from '../../../cache/cache.ts';
import { chargeHit } from '../../../cache/charge.ts';
import { hitEmbeddings, lookupEmbeddings, saveEmbeddings } from '../../../modalities/embeddings/cached.ts';
import { EmbeddingsRequest } from '../../../modalities/embeddings/request.ts';
import { createEmbeddings } from '../../../modalities/embeddings/service.ts';
import type { ModalityDeps } from '../../../pipeline/priced.ts';
import { cacheHeaders, hitOutcome } from '../../cached.ts';
import { callContext, servedHeaders } from '../../served.ts';

export const embeddingsRoutes =
  (deps: ModalityDeps & { cache?: ResponseCache }, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    app.post('/embeddings', { schema: { body: EmbeddingsRequest } }, async (request, reply) => {
      const context = callContext(request, reply, live);
      const probe = await lookupEmbeddings(deps.cache, deps, context, request.body);
      reply.headers(cacheHeaders(probe));
      if (probe?.hit) {
        const answer = hitEmbeddings(probe, request.body);
        const charge = await chargeHit(deps.spending, context, probe, answer, deps.ownKeys);
        servedHeaders(reply, hitOutcome(deps.catalog, probe, charge));
        return answer;
      }
      const served = await createEmbeddings(deps, context, request.body);
      servedHeaders(reply, served);
      await saveEmbeddings(deps.cache, probe, request.id, served);
      return served.result;
    });
  };
