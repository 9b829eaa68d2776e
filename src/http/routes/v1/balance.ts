import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { balanceNanos } from '../../../../projections/balances/index.ts';
import type { Sql } from '../../../../projections/types.ts';
import type { SubAccounts } from '../../../accounts/sub-accounts.ts';
import { toBalance } from '../../../billing/balance.ts';

export const Balance = z.object({ cents: z.number().int(), usd: z.number() });

/**
 * The account's prepaid balance (top-ups less charges) from the balance read model. A sub-account key sees
 * what is left of its own spend cap instead, in its own price and for the cap's current period (docs/billing.md,
 * Reselling): its customer has no business with the account's money.
 */
export const balanceRoutes =
  (sql: Sql, subAccounts: SubAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    app.get('/balance', { schema: { response: { 200: Balance } } }, async (request) => {
      if (request.auth.subAccountId) return toBalance(await subAccounts.capLeft(request.auth));
      return toBalance((await balanceNanos(sql, request.auth.accountId)) ?? 0n);
    });
  };
