import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import type { ChatDeps } from '../../../chat/complete.ts';
import { OcrRequest } from '../../../modalities/ocr/request.ts';
import { createOcr } from '../../../modalities/ocr/service.ts';
import { callContext, servedHeaders } from '../../served.ts';

export const ocrRoutes =
  (deps: ChatDeps, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    app.post(
      '/ocr',
      { schema: { body: OcrRequest }, bodyLimit: 72 * 1024 * 1024 },
      async (request, reply) => {
        const served = await createOcr(deps, callContext(request, reply, live), request.body);
        servedHeaders(reply, served);
        return served.result;
      },
    );
  };
