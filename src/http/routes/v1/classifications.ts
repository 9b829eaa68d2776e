import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import type { ChatDeps } from '../../../chat/dispatch.ts';
import { ClassificationRequest } from '../../../modalities/classifications/request.ts';
import { createClassification } from '../../../modalities/classifications/service.ts';
import { requestContext, servedHeaders } from '../../../modalities/http.ts';

export const classificationsRoutes =
  (deps: ChatDeps, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    app.post('/classifications', { schema: { body: ClassificationRequest } }, async (request, reply) => {
      const served = await createClassification(deps, requestContext(request, reply, live), request.body);
      servedHeaders(reply, served);
      return served.result;
    });
  };
