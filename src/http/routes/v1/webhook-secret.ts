import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { WebhookSecrets } from '../../../webhooks/secrets.ts';

/**
 * The calling key's webhook signing secret, and its rotation. Each key has its own (a sub-account's key too); a
 * rotation takes effect at once for every signature made after it, and raises `key.rotated`.
 */
export const webhookSecretRoutes =
  (secrets: WebhookSecrets): FastifyPluginAsyncZod =>
  async (app) => {
    app.get('/webhook-secret', async (request) => ({
      object: 'webhook_secret' as const,
      ...(await secrets.current(request.auth.keyId)),
    }));

    app.post('/webhook-secret/rotate', async (request) => ({
      object: 'webhook_secret' as const,
      ...(await secrets.rotate(request.auth, request.id)),
    }));
  };
