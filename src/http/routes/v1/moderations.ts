import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import type { ModalityDeps } from '../../../modalities/dispatch.ts';
import { requestContext, servedHeaders } from '../../../modalities/http.ts';
import { ModerationsRequest } from '../../../modalities/moderations/request.ts';
import { createModerations } from '../../../modalities/moderations/service.ts';

export const moderationsRoutes =
  (deps: ModalityDeps, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    app.post('/moderations', { schema: { body: ModerationsRequest } }, async (request, reply) => {
      const served = await createModerations(deps, requestContext(request, reply, live), request.body);
      servedHeaders(reply, served);
      return served.result;
    });
  };
