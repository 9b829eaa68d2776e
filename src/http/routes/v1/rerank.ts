import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import { RerankRequest } from '../../../modalities/rerank/request.ts';
import { createRerank } from '../../../modalities/rerank/service.ts';
import type { ModalityDeps } from '../../../pipeline/priced.ts';
import { callContext, servedHeaders } from '../../served.ts';

export const rerankRoutes =
  (deps: ModalityDeps, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    app.post('/rerank', { schema: { body: RerankRequest } }, async (request, reply) => {
      const served = await createRerank(deps, callContext(request, reply, live), request.body);
      servedHeaders(reply, served);
      return served.result;
    });
  };
