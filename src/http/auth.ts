import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { looksLikeKey } from '../accounts/keys.ts';
import type { KeyHolder, LiveAccounts } from '../accounts/live-state.ts';
import { RequestRefused } from '../contracts/errors.ts';
import { sameSecret } from './admin-token.ts';
import { unauthenticated } from './errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    auth: KeyHolder;
  }
  interface FastifyInstance {
    requireApiKey(request: FastifyRequest, reply: FastifyReply): Promise<void>;
    requireAdmin(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  }
}

export interface AuthOptions {
  live: LiveAccounts;
  adminToken: string;
  /** The token being replaced, accepted too while a rotation rolls out. */
  previousAdminToken?: string;
}

function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return request.headers['x-api-key']?.toString(); // Anthropic's clients send x-api-key
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? '';
}

/** API keys for `/v1`, the operator's token for `/admin`; neither opens the other's routes. */
export const authPlugin = fp<AuthOptions>(async (app, { live, adminToken, previousAdminToken }) => {
  app.decorateRequest('auth', undefined as unknown as KeyHolder);

  app.decorate('requireApiKey', async (request: FastifyRequest) => {
    const key = bearer(request);
    if (key === undefined) throw unauthenticated('Missing API key: send Authorization: Bearer sk-gw-...');
    if (!looksLikeKey(key)) throw unauthenticated('Malformed API key: keys start with sk-gw-');
    const checked = live.check(key);
    if (!checked) throw unauthenticated('Invalid API key: unknown or revoked');
    if ('expiredAt' in checked) {
      throw unauthenticated(
        `Expired API key: it expired at ${checked.expiredAt.toISOString()}; use a current key`,
      );
    }
    request.auth = checked.holder;
  });

  app.decorate('requireAdmin', async (request: FastifyRequest) => {
    const token = bearer(request);
    if (token === undefined) throw unauthenticated('Missing admin token');
    if (looksLikeKey(token)) throw new RequestRefused('forbidden', 'API keys cannot use admin routes');
    const accepted =
      sameSecret(token, adminToken) ||
      (previousAdminToken !== undefined && sameSecret(token, previousAdminToken));
    if (!accepted) throw unauthenticated('Invalid admin token');
  });
});
