import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import { EmbeddingsRequest } from '../../../modalities/embeddings/request.ts';
import { createEmbeddings } from '../../../modalities/embeddings/service.ts';
import type { ModalityDeps } from '../../../pipeline/priced.ts';
import { callContext, servedHeaders } from '../../served.ts';

export const embeddingsRoutes =
  (deps: ModalityDeps, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    app.post('/embeddings', { schema: { body: EmbeddingsRequest } }, async (request, reply) => {
      const served = await createEmbeddings(deps, callContext(request, reply, live), request.body);
      servedHeaders(reply, served);
      return served.result;
    });
  };
