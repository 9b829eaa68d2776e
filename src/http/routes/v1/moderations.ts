import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import { ModerationsRequest } from '../../../modalities/moderations/request.ts';
import { createModerations } from '../../../modalities/moderations/service.ts';
import type { ModalityDeps } from '../../../pipeline/priced.ts';
import { callContext, servedHeaders } from '../../served.ts';

export const moderationsRoutes =
  (deps: ModalityDeps, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    app.post('/moderations', { schema: { body: ModerationsRequest } }, async (request, reply) => {
      const served = await createModerations(deps, callContext(request, reply, live), request.body);
      servedHeaders(reply, served);
      return served.result;
    });
  };
