import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import type { ChatDeps } from '../../../chat/complete.ts';
import { TranslationRequest } from '../../../modalities/translations/request.ts';
import { createTranslation } from '../../../modalities/translations/service.ts';
import { callContext, servedHeaders } from '../../served.ts';

export const translationsRoutes =
  (deps: ChatDeps, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    app.post('/translations', { schema: { body: TranslationRequest } }, async (request, reply) => {
      const served = await createTranslation(deps, callContext(request, reply, live), request.body);
      servedHeaders(reply, served);
      return served.result;
    });
  };
