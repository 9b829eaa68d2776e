import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { RequestRefused } from '../../../contracts/errors.ts';
import { type CredentialPools, UnknownCredential } from '../../../providers/credentials/pool.ts';

const Provider = z.object({ provider: z.string().min(1) });

/**
 * The providers' credential pools as this instance holds them (`credentials list|disable|enable` in the CLI): the
 * operator reads each credential's standing, never its secret, and takes one out of rotation or puts it back.
 */
export const adminCredentialRoutes =
  (pools: CredentialPools): FastifyPluginAsyncZod =>
  async (app) => {
    app.get('/providers/credentials', () => ({ object: 'list', data: pools.report() }));
    app.get('/providers/:provider/credentials', { schema: { params: Provider } }, (request) => ({
      provider: request.params.provider,
      credentials: pools.credentialsOf(request.params.provider),
    }));
    app.post(
      '/providers/:provider/credentials/:name',
      {
        schema: {
          params: Provider.extend({ name: z.string().min(1) }),
          body: z.object({ in_rotation: z.boolean() }).strict(),
        },
      },
      (request) => {
        const { provider, name } = request.params;
        try {
          return { provider, credential: pools.setInRotation(provider, name, request.body.in_rotation) };
        } catch (error) {
          if (error instanceof UnknownCredential) throw new RequestRefused('not_found', error.message);
          throw error;
        }
      },
    );
  };
