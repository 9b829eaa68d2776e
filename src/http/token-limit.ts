import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import type { KeyHolder, LiveAccounts } from '../accounts/live-state.ts';
import { cappedTpm } from '../accounts/reseller-settings.ts';
import { RequestRefused } from '../contracts/errors.ts';
import type { BucketLimit, RateDecision, RateLimiter } from '../limits/rate-limiter.ts';
import type { AdmittedTokens, TokenLimit } from '../pipeline/types.ts';

const NOTHING_ADMITTED: AdmittedTokens = { settle: async () => {}, release: async () => {} };

/**
 * The buckets a request's tokens are counted in: its sub-account's (its own `rate_limit_tpm`, never above its
 * account's, even after the account's is lowered) and its account's (shared by all its keys and sub-accounts).
 * Empty when neither has a limit.
 */
export function tokenBuckets(live: LiveAccounts, auth: KeyHolder): BucketLimit[] {
  const accountTpm = live.account(auth.accountId)?.rateLimitTpm ?? null;
  const subTpm = auth.subAccountId
    ? cappedTpm(live.subAccount(auth.subAccountId)?.rateLimitTpm ?? null, accountTpm)
    : null;
  return [
    ...(subTpm === null ? [] : [{ bucket: `tpm:sub:${auth.subAccountId}`, ratePerMinute: subTpm }]),
    ...(accountTpm === null ? [] : [{ bucket: `tpm:account:${auth.accountId}`, ratePerMinute: accountTpm }]),
  ];
}

/**
 * One request's tokens-per-minute limit, asked by the pipeline when the request's worst case is known (chat:
 * input + output limit × choices; embeddings: input). All buckets are taken from at once or none is. A worst case
 * above a bucket's whole minute could never pass, so it is refused at once, as OpenAI does ("Request too large"),
 * with `x-should-retry: false` so that SDKs do not retry it. A limiter that cannot answer lets the request through.
 */
export function requestTokenLimit(
  limiter: RateLimiter,
  live: LiveAccounts,
  auth: KeyHolder,
  reply: FastifyReply,
): TokenLimit {
  return {
    async admit(tokens) {
      const buckets = tokenBuckets(live, auth);
      if (buckets.length === 0 || !(tokens > 0)) return NOTHING_ADMITTED;
      const smallest = buckets.reduce((a, b) => (b.ratePerMinute < a.ratePerMinute ? b : a));
      if (tokens > smallest.ratePerMinute) {
        throw new RequestRefused(
          'rate_limited',
          `Request too large for ${whose(smallest.bucket)} on tokens per min (TPM): Limit ${smallest.ratePerMinute}, Requested ${tokens}. The input or the output limit (max_tokens) must be reduced in order to run successfully.`,
          { 'x-ratelimit-limit-tokens': String(smallest.ratePerMinute), 'x-should-retry': 'false' },
        );
      }
      let decision: RateDecision;
      try {
        decision = await limiter.takeAll(buckets, tokens);
      } catch (error) {
        reply.log.warn({ err: error }, 'rate limiter unavailable; tokens not counted');
        return NOTHING_ADMITTED;
      }
      const headers = tokenHeaders(decision);
      if (!decision.allowed) {
        throw new RequestRefused(
          'rate_limited',
          `Rate limit of ${decision.limit} tokens per minute reached for ${whose(decision.bucket)}: requested ${tokens}, remaining ${decision.remaining}; retry in ${decision.retryAfterSeconds} s`,
          { 'retry-after': String(decision.retryAfterSeconds), ...headers },
        );
      }
      reply.headers(headers);
      return admitted(limiter, buckets, tokens, reply.log);
    },
  };
}

/** Trued up once: a settle after a release (or the reverse) changes nothing. */
function admitted(
  limiter: RateLimiter,
  buckets: BucketLimit[],
  tokens: number,
  log: FastifyBaseLogger,
): AdmittedTokens {
  let open = true;
  const giveBack = async (unused: number) => {
    if (!open) return;
    open = false;
    if (!Number.isFinite(unused) || unused === 0) return;
    try {
      await limiter.giveBack(buckets, unused);
    } catch (error) {
      log.warn({ err: error }, 'rate limiter unavailable; tokens not trued up');
    }
  };
  return { settle: (used) => giveBack(tokens - used), release: () => giveBack(tokens) };
}

const whose = (bucket: string | undefined) =>
  bucket?.includes(':sub:') ? 'this sub-account' : 'this account';

/** OpenAI's headers, of the binding bucket: its limit, what is left, and how long until it is full again. */
function tokenHeaders(decision: RateDecision): Record<string, string> {
  return {
    'x-ratelimit-limit-tokens': String(decision.limit),
    'x-ratelimit-remaining-tokens': String(decision.remaining),
    'x-ratelimit-reset-tokens': resetText(untilFullMs(decision)),
  };
}

/** A bucket refills its whole limit in a minute. */
export const untilFullMs = (decision: Pick<RateDecision, 'limit' | 'remaining'>): number =>
  decision.limit > 0 ? (60_000 * Math.max(0, decision.limit - decision.remaining)) / decision.limit : 0;

/** A duration as OpenAI writes it (Go's form): `6m0s`, `1.5s`, `12ms`, `0s`. */
export function resetText(ms: number): string {
  const whole = Math.ceil(ms);
  if (!(whole > 0)) return '0s';
  if (whole < 1000) return `${whole}ms`;
  const minutes = Math.floor(whole / 60_000);
  const seconds = `${Number(((whole % 60_000) / 1000).toFixed(3))}s`;
  return minutes > 0 ? `${minutes}m${seconds}` : seconds;
}
