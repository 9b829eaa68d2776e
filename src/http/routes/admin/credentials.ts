import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { credentialViews } from '../../../accounts/operator-credential-views.ts';
import type { OperatorCredentials } from '../../../accounts/operator-credentials.ts';
import { credentialFields } from '../../../config-file.ts';
import { RequestRefused } from '../../../contracts/errors.ts';
import { type CredentialPools, UnknownCredential } from '../../../providers/credentials/pool.ts';
import { CredentialResponses, changeOf, newCredentialOf } from './credential-bodies.ts';

const Provider = z.object({ provider: z.string().min(1) });
const Named = Provider.extend({ name: z.string().min(1) });
/** Longer than any provider's key. */
const MAX_KEY_LENGTH = 4096;

const NewCredential = z
  .object({
    name: credentialFields.name,
    key: z.string().trim().min(1).max(MAX_KEY_LENGTH),
    weight: credentialFields.weight.optional(),
    rpm: credentialFields.rpm.optional(),
    tpm: credentialFields.tpm.optional(),
    monthly_spend_cents: credentialFields.monthly_spend_cents.optional(),
  })
  .strict();

const CredentialChange = z
  .object({
    weight: credentialFields.weight.optional(),
    rpm: credentialFields.rpm.nullable().optional(),
    tpm: credentialFields.tpm.nullable().optional(),
    monthly_spend_cents: credentialFields.monthly_spend_cents.nullable().optional(),
  })
  .strict()
  .refine((b) => Object.values(b).some((v) => v !== undefined), {
    message: 'give weight, rpm, tpm or monthly_spend_cents',
  });

/**
 * The providers' credential pools (`credentials list|add|set|remove|disable|enable` in the CLI): the operator reads
 * each credential's standing as this instance holds it, never its secret; takes one out of rotation or puts it back
 * (this instance only); and adds, changes and removes credentials of its own, which every instance follows.
 */
export const adminCredentialRoutes =
  (pools: CredentialPools, operator: OperatorCredentials | undefined): FastifyPluginAsyncZod =>
  async (app) => {
    const isAdded = (provider: string, name: string) => operator?.isAdded(provider, name) ?? false;
    const one = (provider: string, name: string) => ({
      provider,
      credential: credentialViews(pools, provider, isAdded).find((c) => c.name === name),
    });
    const adding = () => {
      if (!operator)
        throw new RequestRefused('forbidden', 'this gateway does not take credentials at runtime');
      return operator;
    };

    app.get('/providers/credentials', { schema: { response: CredentialResponses.list } }, () => ({
      object: 'list' as const,
      data: pools.report().map(({ provider, credentials }) => ({
        provider,
        credentials: credentialViews(pools, provider, isAdded, credentials),
      })),
    }));
    app.get(
      '/providers/:provider/credentials',
      { schema: { params: Provider, response: CredentialResponses.pool } },
      (request) => ({
        provider: request.params.provider,
        credentials: credentialViews(pools, request.params.provider, isAdded),
      }),
    );
    app.post(
      '/providers/:provider/credentials',
      { schema: { params: Provider, body: NewCredential, response: CredentialResponses.one } },
      async (request) => {
        const { provider } = request.params;
        await adding().add(provider, newCredentialOf(request.body), request.id);
        return one(provider, request.body.name);
      },
    );
    app.patch(
      '/providers/:provider/credentials/:name',
      { schema: { params: Named, body: CredentialChange, response: CredentialResponses.one } },
      async (request) => {
        const { provider, name } = request.params;
        await adding().change(provider, name, changeOf(request.body), request.id);
        return one(provider, name);
      },
    );
    app.delete(
      '/providers/:provider/credentials/:name',
      { schema: { params: Named, response: CredentialResponses.removed } },
      async (request) => {
        const { provider, name } = request.params;
        await adding().remove(provider, name, request.id);
        return { object: 'provider_credential' as const, provider, name, deleted: true as const };
      },
    );
    app.post(
      '/providers/:provider/credentials/:name',
      {
        schema: {
          params: Named,
          body: z.object({ in_rotation: z.boolean() }).strict(),
          response: CredentialResponses.one,
        },
      },
      (request) => {
        const { provider, name } = request.params;
        try {
          pools.setInRotation(provider, name, request.body.in_rotation);
        } catch (error) {
          if (error instanceof UnknownCredential) throw new RequestRefused('not_found', error.message);
          throw error;
        }
        return one(provider, name);
      },
    );
  };
