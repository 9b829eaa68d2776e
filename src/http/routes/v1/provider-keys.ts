import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  MAX_PROVIDER_KEY_LENGTH,
  MAX_PROVIDER_KEY_NAME,
  type ProviderKeys,
} from '../../../accounts/provider-keys.ts';

const NewProviderKey = z.object({
  provider: z.string().trim().min(1).max(100),
  api_key: z.string().trim().min(1).max(MAX_PROVIDER_KEY_LENGTH),
  name: z.string().trim().min(1).max(MAX_PROVIDER_KEY_NAME),
});
const ProviderKeyId = z.object({ id: z.string().min(1).max(200) });

/** `ProviderKeyView`: serialized through it, so a field the view gains later (a secret among them) is never sent. */
const ProviderKey = z.object({
  object: z.literal('provider_key'),
  id: z.string(),
  provider: z.string(),
  name: z.string(),
  last4: z.string(),
  sub_account_id: z.string().nullable(),
  created_at: z.number().int(),
});
const ProviderKeyList = z.object({ object: z.literal('list'), data: z.array(ProviderKey) });
const ProviderKeyRemoved = z.object({
  object: z.literal('provider_key'),
  id: z.string(),
  deleted: z.literal(true),
});

/**
 * Provider keys the caller brings (docs/providers.md, Bring your own key): an account's main key manages the
 * account's own, a sub-account's key its own when the account allows (`byok_sub_accounts`). The secret is answered
 * never, not even on creation.
 */
export const providerKeyRoutes =
  (keys: ProviderKeys): FastifyPluginAsyncZod =>
  async (app) => {
    app.post(
      '/provider-keys',
      { schema: { body: NewProviderKey, response: { 200: ProviderKey } } },
      (request) =>
        keys.register(
          request.auth,
          { provider: request.body.provider, apiKey: request.body.api_key, name: request.body.name },
          request.id,
        ),
    );
    app.get('/provider-keys', { schema: { response: { 200: ProviderKeyList } } }, async (request) => ({
      object: 'list' as const,
      data: await keys.list(request.auth),
    }));
    app.delete(
      '/provider-keys/:id',
      { schema: { params: ProviderKeyId, response: { 200: ProviderKeyRemoved } } },
      (request) => keys.remove(request.auth, request.params.id, request.id),
    );
  };
