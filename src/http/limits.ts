import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LiveAccounts } from '../accounts/live-state.ts';
import { RequestRefused } from '../contracts/errors.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Management routes a sub-account's key may not call. */
    mainKeyOnly?: boolean;
  }
}

/** One token bucket per key: the sub-account's limit for its key, the account's for the account's keys. */
export function rateLimitHook(limiter: RateLimiter, live: LiveAccounts) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const { keyId, accountId, subAccountId } = request.auth;
    const accountRpm = live.account(accountId)?.rateLimitRpm ?? 0;
    // A sub-account's limit never exceeds its account's, even after the account's is lowered.
    const rpm = subAccountId
      ? Math.min(live.subAccount(subAccountId)?.rateLimitRpm ?? 0, accountRpm)
      : accountRpm;
    let decision: Awaited<ReturnType<RateLimiter['take']>>;
    try {
      decision = await limiter.take(`key:${keyId}`, rpm);
    } catch (error) {
      // A limiter that cannot answer (Redis down) must not take the API down with it.
      request.log.warn({ err: error }, 'rate limiter unavailable; request allowed');
      return;
    }
    reply.header('x-ratelimit-limit-requests', String(decision.limit));
    reply.header('x-ratelimit-remaining-requests', String(decision.remaining));
    if (!decision.allowed) {
      throw new RequestRefused(
        'rate_limited',
        `Rate limit of ${rpm} requests per minute reached for this key; retry in ${decision.retryAfterSeconds} s`,
        { 'retry-after': String(decision.retryAfterSeconds) },
      );
    }
  };
}

export async function requireMainKey(request: FastifyRequest): Promise<void> {
  if (request.routeOptions.config.mainKeyOnly && request.auth.subAccountId) {
    throw new RequestRefused('forbidden', 'A sub-account key cannot manage the account; use a main key');
  }
}
