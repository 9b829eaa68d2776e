import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { ResponseCache } from '../../../cache/cache.ts';
import { RequestRefused } from '../../../contracts/errors.ts';

/**
 * `DELETE /v1/cache`: drops every exact and semantic entry of the caller's scope (an account key: the account's and
 * its sub-accounts'; a sub-account key: its own) and says how many went.
 */
export const cacheRoutes =
  (cache: ResponseCache | undefined): FastifyPluginAsyncZod =>
  async (app) => {
    app.delete('/cache', async (request) => {
      if (!cache) throw new RequestRefused('invalid', 'The response cache is not enabled on this gateway');
      const deleted = await cache.purge(request.auth, request.id);
      return {
        object: 'cache.purge',
        scope: request.auth.subAccountId === null ? 'account' : 'sub_account',
        deleted,
      };
    });
  };
