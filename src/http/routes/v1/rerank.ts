import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import type { ModalityDeps } from '../../../modalities/dispatch.ts';
import { requestContext, servedHeaders } from '../../../modalities/http.ts';
import { RerankRequest } from '../../../modalities/rerank/request.ts';
import { createRerank } from '../../../modalities/rerank/service.ts';

export const rerankRoutes =
  (deps: ModalityDeps, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    app.post('/rerank', { schema: { body: RerankRequest } }, async (request, reply) => {
      const served = await createRerank(deps, requestContext(request, reply, live), request.body);
      servedHeaders(reply, served);
      return served.result;
    });
  };
