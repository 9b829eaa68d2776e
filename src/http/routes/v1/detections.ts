import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import type { ChatDeps } from '../../../chat/complete.ts';
import { DetectionRequest } from '../../../modalities/detections/request.ts';
import { createDetection } from '../../../modalities/detections/service.ts';
import { callContext, servedHeaders } from '../../served.ts';

export const detectionsRoutes =
  (deps: ChatDeps, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    app.post(
      '/detections',
      { schema: { body: DetectionRequest }, bodyLimit: 12 * 1024 * 1024 },
      async (request, reply) => {
        const served = await createDetection(deps, callContext(request, reply, live), request.body);
        servedHeaders(reply, served);
        return served.result;
      },
    );
  };
