import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { ProviderHealth } from '../../../providers/health.ts';

/** p50, p95 and error rate of the recent calls to each upstream provider, from this instance's view. */
export const healthRoutes =
  (health: ProviderHealth): FastifyPluginAsyncZod =>
  async (app) => {
    app.get('/health/providers', async () => ({ object: 'list', data: health.report() }));
  };
