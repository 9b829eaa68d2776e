import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LiveAccounts } from '../accounts/live-state.ts';
import { RequestRefused } from '../contracts/errors.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';
import type { TokenLimit } from '../pipeline/types.ts';
import { requestTokenLimit, resetText, tokenBuckets, untilFullMs } from './token-limit.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Management routes a sub-account's key may not call. */
    mainKeyOnly?: boolean;
  }
  interface FastifyRequest {
    /** Set when the account or sub-account has a tokens-per-minute limit; the pipeline asks it (token-limit.ts). */
    tokenLimit?: TokenLimit;
  }
}

/**
 * Every request takes a token from its account's bucket, shared by all the account's keys and its sub-accounts' (the
 * account's `rate_limit_rpm`), and a sub-account's request also one from its sub-account's bucket (its own
 * `rate_limit_rpm`, never above the account's), at once: either refusing spends neither. Tokens per minute are
 * counted later, once a request's worst case is known: this hook only hands the request its token limit.
 */
export function rateLimitHook(limiter: RateLimiter, live: LiveAccounts) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const { accountId, subAccountId } = request.auth;
    if (tokenBuckets(live, request.auth).length > 0) {
      request.tokenLimit = requestTokenLimit(limiter, live, request.auth, reply);
    }
    const accountRpm = live.account(accountId)?.rateLimitRpm ?? 0;
    // A sub-account's limit never exceeds its account's, even after the account's is lowered.
    const subRpm = subAccountId ? Math.min(live.subAccount(subAccountId)?.rateLimitRpm ?? 0, accountRpm) : 0;
    const buckets = [
      ...(subAccountId ? [{ bucket: `sub:${subAccountId}`, ratePerMinute: subRpm }] : []),
      { bucket: `account:${accountId}`, ratePerMinute: accountRpm },
    ];
    let decision: Awaited<ReturnType<RateLimiter['takeAll']>>;
    try {
      decision = await limiter.takeAll(buckets);
    } catch (error) {
      // A limiter that cannot answer (Redis down) must not take the API down with it.
      request.log.warn({ err: error }, 'rate limiter unavailable; request allowed');
      return;
    }
    reply.header('x-ratelimit-limit-requests', String(decision.limit));
    reply.header('x-ratelimit-remaining-requests', String(decision.remaining));
    reply.header('x-ratelimit-reset-requests', resetText(untilFullMs(decision)));
    if (!decision.allowed) {
      const whose = decision.bucket?.startsWith('sub:') ? 'this sub-account' : 'this account';
      throw new RequestRefused(
        'rate_limited',
        `Rate limit of ${decision.limit} requests per minute reached for ${whose}; retry in ${decision.retryAfterSeconds} s`,
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
