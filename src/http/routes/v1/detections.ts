import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import type { ChatDeps } from '../../../chat/dispatch.ts';
import { DetectionRequest } from '../../../modalities/detections/request.ts';
import { createDetection } from '../../../modalities/detections/service.ts';
import { requestContext, servedHeaders } from '../../../modalities/http.ts';

export const detectionsRoutes =
  (deps: ChatDeps, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    app.post(
      '/detections',
      { schema: { body: DetectionRequest }, bodyLimit: 12 * 1024 * 1024 },
      async (request, reply) => {
        const served = await createDetection(deps, requestContext(request, reply, live), request.body);
        servedHeaders(reply, served);
        return served.result;
      },
    );
  };
