import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ADJUSTMENT_REASON_MAX, ADJUSTMENT_REFERENCE_MAX } from '../../../accounts/adjustments.ts';
import type { AccountService } from '../../../accounts/service.ts';
import { CACHE_MODES } from '../../../cache/mode.ts';
import { accountRestriction } from '../../../routing/patterns.ts';

const AccountId = z.object({ accountId: z.string().min(1) });

/** The operator's account actions; the CLI calls these when a gateway is running. */
export const adminAccountRoutes =
  (accounts: AccountService): FastifyPluginAsyncZod =>
  async (app) => {
    app.get('/health', async () => ({ status: 'ok' }));

    app.post(
      '/accounts',
      { schema: { body: z.object({ name: z.string().trim().min(1).max(200) }) } },
      (request) => accounts.createAccount(request.body.name, request.id),
    );

    app.post(
      '/accounts/:accountId/settings',
      {
        schema: {
          params: AccountId,
          body: z
            .object({
              rate_limit_rpm: z.number().int().positive().max(1_000_000).optional(),
              /** Tokens per minute of all the account's keys and sub-accounts; null lifts it. */
              rate_limit_tpm: z.number().int().positive().max(1_000_000_000).nullable().optional(),
              balance_low_cents: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
              /** The request log's bodies for this account; null returns to the gateway's setting. */
              request_bodies: z.enum(['keep', 'drop']).nullable().optional(),
              request_retention_days: z.number().int().positive().max(36_500).nullable().optional(),
              /** Whether the MCP server offers this account's keys its write tools. */
              mcp_write_tools: z.boolean().optional(),
              /** The response cache's mode for the account's requests that name none (docs/cache.md). */
              cache_default: z.enum(CACHE_MODES).optional(),
              /** Whether sub-accounts may register provider keys; whether a failing own key falls back to the pool. */
              byok_sub_accounts: z.boolean().optional(),
              byok_fallback: z.boolean().optional(),
            })
            .refine((b) => Object.values(b).some((v) => v !== undefined), {
              message:
                'give rate_limit_rpm, rate_limit_tpm, balance_low_cents, request_bodies, request_retention_days, mcp_write_tools, cache_default, byok_sub_accounts or byok_fallback',
            }),
        },
      },
      async (request) => {
        const {
          rate_limit_rpm,
          rate_limit_tpm,
          balance_low_cents,
          request_bodies,
          request_retention_days,
          mcp_write_tools,
          cache_default,
          byok_sub_accounts,
          byok_fallback,
        } = request.body;
        await accounts.changeSettings(
          request.params.accountId,
          {
            rateLimitRpm: rate_limit_rpm,
            rateLimitTpm: rate_limit_tpm,
            balanceLowCents: balance_low_cents,
            requestBodies: request_bodies,
            requestRetentionDays: request_retention_days,
            mcpWriteTools: mcp_write_tools,
            cacheDefault: cache_default,
            byokSubAccounts: byok_sub_accounts,
            byokFallback: byok_fallback,
          },
          request.id,
        );
        return { account_id: request.params.accountId, ...request.body };
      },
    );

    // The models the automatic router may choose for the account, within the operator's own lists.
    const Patterns = z.array(z.string().trim().min(1).max(200)).max(500);
    app.post(
      '/accounts/:accountId/routing',
      {
        schema: {
          params: AccountId,
          body: z.object({ allowed: Patterns.nullable().default(null), excluded: Patterns.default([]) }),
        },
      },
      async (request) => {
        const routing = accountRestriction(request.body.allowed, request.body.excluded);
        await accounts.changeSettings(request.params.accountId, { routing }, request.id);
        return { account_id: request.params.accountId, routing: routing ?? { allowed: null, excluded: [] } };
      },
    );

    app.post(
      '/accounts/:accountId/top-ups',
      {
        schema: {
          params: AccountId,
          body: z.object({
            cents: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
            reference: z.string().trim().min(1).max(200),
          }),
        },
      },
      (request) =>
        accounts.topUp(request.params.accountId, request.body.cents, request.body.reference, request.id),
    );

    // A credit (positive cents) or debit (negative) of the balance, once per reference (docs/billing.md).
    app.post(
      '/accounts/:accountId/adjustments',
      {
        schema: {
          params: AccountId,
          body: z.object({
            cents: z
              .number()
              .int()
              .min(-Number.MAX_SAFE_INTEGER)
              .max(Number.MAX_SAFE_INTEGER)
              .refine((cents) => cents !== 0, 'must not be 0: positive for a credit, negative for a debit'),
            reason: z.string().trim().min(1).max(ADJUSTMENT_REASON_MAX),
            reference: z.string().trim().min(1).max(ADJUSTMENT_REFERENCE_MAX),
            /** The reference of the top-up this debit reverses. */
            reverses: z.string().trim().min(1).max(ADJUSTMENT_REFERENCE_MAX).optional(),
          }),
        },
      },
      (request) => accounts.adjust(request.params.accountId, request.body),
    );
  };
