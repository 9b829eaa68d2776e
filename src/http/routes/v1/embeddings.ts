import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import type { ModalityDeps } from '../../../modalities/dispatch.ts';
import { EmbeddingsRequest } from '../../../modalities/embeddings/request.ts';
import { createEmbeddings } from '../../../modalities/embeddings/service.ts';
import { requestContext, servedHeaders } from '../../../modalities/http.ts';

export const embeddingsRoutes =
  (deps: ModalityDeps, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    app.post('/embeddings', { schema: { body: EmbeddingsRequest } }, async (request, reply) => {
      const served = await createEmbeddings(deps, requestContext(request, reply, live), request.body);
      servedHeaders(reply, served);
      return served.result;
    });
  };
