import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MAX_GRACE_SECONDS, MAX_NAME, type NamedKeys } from '../../../accounts/named-keys.ts';

const AccountId = z.object({ accountId: z.string().min(1) });
const KeyId = z.object({ keyId: z.string().min(1) });
const UnixSeconds = z.number().int().positive().nullable().optional();

/** The operator's key actions (`keys create|revoke|rotate` in the CLI); a revocation or rotation takes any key. */
export const adminKeyRoutes =
  (keys: NamedKeys): FastifyPluginAsyncZod =>
  async (app) => {
    app.post(
      '/accounts/:accountId/keys',
      {
        schema: {
          params: AccountId,
          // No body at all is an unnamed key (`default`), as before keys had names.
          body: z
            .object({ name: z.string().trim().min(1).max(MAX_NAME).optional(), expires_at: UnixSeconds })
            .nullable(),
        },
      },
      async (request) => {
        const accountId = request.params.accountId;
        const issued = await keys.issue(
          { accountId, subAccountId: null },
          { name: request.body?.name, expiresAt: request.body?.expires_at },
          request.id,
        );
        return { account_id: accountId, key_id: issued.id, ...issued };
      },
    );

    app.post('/keys/:keyId/revoke', { schema: { params: KeyId } }, (request) =>
      keys.revokeById(request.params.keyId, request.id),
    );

    app.post(
      '/keys/:keyId/rotate',
      {
        schema: {
          params: KeyId,
          body: z
            .object({
              grace_seconds: z.number().int().min(0).max(MAX_GRACE_SECONDS).default(0),
              expires_at: UnixSeconds,
            })
            .nullable(),
        },
      },
      async (request) => {
        const rotated = await keys.rotateById(
          request.params.keyId,
          { graceSeconds: request.body?.grace_seconds ?? 0, expiresAt: request.body?.expires_at },
          request.id,
        );
        return { key_id: rotated.id, ...rotated };
      },
    );
  };
