import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import type { ChatDeps } from '../../../chat/dispatch.ts';
import { requestContext, servedHeaders } from '../../../modalities/http.ts';
import { TranslationRequest } from '../../../modalities/translations/request.ts';
import { createTranslation } from '../../../modalities/translations/service.ts';

export const translationsRoutes =
  (deps: ChatDeps, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    app.post('/translations', { schema: { body: TranslationRequest } }, async (request, reply) => {
      const served = await createTranslation(deps, requestContext(request, reply, live), request.body);
      servedHeaders(reply, served);
      return served.result;
    });
  };
