import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import type { ChatDeps } from '../../../chat/complete.ts';
import { ClassificationRequest } from '../../../modalities/classifications/request.ts';
import { createClassification } from '../../../modalities/classifications/service.ts';
import { callContext, servedHeaders } from '../../served.ts';

export const classificationsRoutes =
  (deps: ChatDeps, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    app.post('/classifications', { schema: { body: ClassificationRequest } }, async (request, reply) => {
      const served = await createClassification(deps, callContext(request, reply, live), request.body);
      servedHeaders(reply, served);
      return served.result;
    });
  };
