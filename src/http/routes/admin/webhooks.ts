import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AccountService } from '../../../accounts/service.ts';
import { checkEndpointUrl } from '../../../webhooks/url.ts';

/** The operator sets where an account's lifecycle webhooks go (`webhooks set` in the CLI). */
export const adminWebhookRoutes =
  (accounts: AccountService, env: NodeJS.ProcessEnv): FastifyPluginAsyncZod =>
  async (app) => {
    app.post(
      '/accounts/:accountId/webhook-endpoint',
      {
        schema: {
          params: z.object({ accountId: z.string().min(1) }),
          body: z.object({ url: z.string().trim().min(1).max(2048).nullable() }),
        },
      },
      async (request) => {
        const url = request.body.url === null ? null : await checkEndpointUrl(request.body.url, env);
        await accounts.setWebhookEndpoint(request.params.accountId, url, request.id);
        return { account_id: request.params.accountId, url };
      },
    );
  };
