import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { balanceNanos } from '../../../../projections/balances/index.ts';
import type { Sql } from '../../../../projections/types.ts';
import { subAccountSpending } from '../../../../projections/usage/index.ts';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import { toBalance } from '../../../billing/balance.ts';

export const Balance = z.object({ cents: z.number().int(), usd: z.number() });

/**
 * The account's prepaid balance (top-ups less charges) from the balance read model. A sub-account key sees
 * what is left of its own spend cap instead: its customer has no business with the account's money.
 */
export const balanceRoutes =
  (sql: Sql, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    app.get('/balance', { schema: { response: { 200: Balance } } }, async (request) => {
      const subAccountId = request.auth.subAccountId;
      if (subAccountId) {
        const cap = live.subAccount(subAccountId)?.spendCapNanos ?? 0n;
        const spent = await subAccountSpending(sql, request.auth.accountId, subAccountId);
        return toBalance(cap - (spent.get(subAccountId) ?? 0n));
      }
      return toBalance((await balanceNanos(sql, request.auth.accountId)) ?? 0n);
    });
  };
