import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { ChatDeps } from '../../../chat/complete.ts';
import { ChatCompletionRequest } from '../../../chat/request.ts';
import { routeAsk } from '../../../chat/routed.ts';
import { RequestRefused } from '../../../contracts/errors.ts';
import { routingHeaders } from '../../../pipeline/headers.ts';
import { routingRecord } from '../../../routing/record.ts';
import { parseStrategy, routedModel } from '../../../routing/strategy.ts';

/**
 * The router's decision for a chat body, without calling a provider or holding anything: the same candidates,
 * figures and choice a real request would get now (a conversation's remembered model included, though a preview
 * is not remembered). POST, since the decision depends on the whole body.
 */
export const routingRoutes =
  (deps: ChatDeps): FastifyPluginAsyncZod =>
  async (app) => {
    app.post('/routing/preview', { schema: { body: ChatCompletionRequest } }, async (request, reply) => {
      const body = request.body;
      const strategy = parseStrategy(request.headers['x-routing']);
      const requested = routedModel(body.model);
      if (!requested) {
        throw new RequestRefused(
          'invalid',
          `'model': only auto, auto/text or no model is routed; got ${body.model}`,
        );
      }
      const decision = await deps.router.route(await routeAsk(request.auth, requested, strategy, body), {
        remember: false,
      });
      reply.headers(
        routingHeaders({
          strategy: decision.strategy,
          model: decision.chosen.model.id,
          reason: decision.reason,
          baseline: decision.baseline.id,
        }),
      );
      return { object: 'routing.preview', ...routingRecord(decision) };
    });
  };
