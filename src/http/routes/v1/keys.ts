import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Sql } from '../../../../projections/types.ts';
import { listOwnedKeys, subAccountOwner } from '../../../accounts/key-listing.ts';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import { MAX_GRACE_SECONDS, MAX_NAME, type NamedKeys } from '../../../accounts/named-keys.ts';

/** A Unix time in seconds; whether it is in the future is the service's to say (it has the clock). */
const UnixSeconds = z.number().int().positive();
const NewKey = z.object({
  name: z.string().trim().min(1).max(MAX_NAME),
  expires_at: UnixSeconds.nullable().optional(),
});
/** No body at all (as SDKs send a bodiless POST) is a rotation with no grace. */
const RotateBody = z
  .object({
    grace_seconds: z.number().int().min(0).max(MAX_GRACE_SECONDS).default(0),
    expires_at: UnixSeconds.nullable().optional(),
  })
  .nullable();
const rotation = (body: z.infer<typeof RotateBody>) => ({
  graceSeconds: body?.grace_seconds ?? 0,
  expiresAt: body?.expires_at,
});
const SubAccount = z.object({ id: z.string().min(1) });
const SubAccountKey = z.object({ id: z.string().min(1), key_id: z.string().min(1) });
const MainKey = z.object({ key_id: z.string().min(1) });

/**
 * Named keys: the account's main keys under `/v1/keys`, a sub-account's under `/v1/sub-accounts/{id}/keys`. Main keys
 * only (the route table marks them so); every key of an owner shares its caps, limits and usage.
 */
export const keyRoutes =
  (keys: NamedKeys, live: LiveAccounts, sql: Sql): FastifyPluginAsyncZod =>
  async (app) => {
    const config = { mainKeyOnly: true };
    const main = (accountId: string) => ({ accountId, subAccountId: null });

    app.post('/keys', { config, schema: { body: NewKey } }, (request) =>
      keys.issue(
        main(request.auth.accountId),
        { name: request.body.name, expiresAt: request.body.expires_at },
        request.id,
      ),
    );
    app.get('/keys', { config }, async (request) => ({
      object: 'list' as const,
      data: await listOwnedKeys(live, sql, main(request.auth.accountId), keys.clock()),
    }));
    app.delete('/keys/:key_id', { config, schema: { params: MainKey } }, (request) =>
      keys.revoke(main(request.auth.accountId), request.params.key_id, request.id),
    );
    app.post('/keys/:key_id/rotate', { config, schema: { params: MainKey, body: RotateBody } }, (request) =>
      keys.rotate(main(request.auth.accountId), request.params.key_id, rotation(request.body), request.id),
    );

    const owner = (accountId: string, id: string) => subAccountOwner(live, accountId, id);
    app.post('/sub-accounts/:id/keys', { config, schema: { params: SubAccount, body: NewKey } }, (request) =>
      keys.issue(
        owner(request.auth.accountId, request.params.id),
        { name: request.body.name, expiresAt: request.body.expires_at },
        request.id,
      ),
    );
    app.get('/sub-accounts/:id/keys', { config, schema: { params: SubAccount } }, async (request) => ({
      object: 'list' as const,
      data: await listOwnedKeys(live, sql, owner(request.auth.accountId, request.params.id), keys.clock()),
    }));
    app.delete('/sub-accounts/:id/keys/:key_id', { config, schema: { params: SubAccountKey } }, (request) =>
      keys.revoke(owner(request.auth.accountId, request.params.id), request.params.key_id, request.id),
    );
    app.post(
      '/sub-accounts/:id/keys/:key_id/rotate',
      { config, schema: { params: SubAccountKey, body: RotateBody } },
      (request) =>
        keys.rotate(
          owner(request.auth.accountId, request.params.id),
          request.params.key_id,
          rotation(request.body),
          request.id,
        ),
    );
  };
