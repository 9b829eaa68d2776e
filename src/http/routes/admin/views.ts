import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Sql } from '../../../../projections/types.ts';
import {
  accountBalance,
  accountUsage,
  listAccounts,
  listKeys,
  showAccount,
} from '../../../accounts/operator-views.ts';
import { Month } from '../v1/usage.ts';

const AccountId = z.object({ accountId: z.string().min(1) });

/** What the operator reads about accounts (`accounts list|show`, `keys list`, `balance`, `usage` in the CLI). */
export const adminViewRoutes =
  (sql: Sql): FastifyPluginAsyncZod =>
  async (app) => {
    app.get('/accounts', () => listAccounts(sql));
    app.get('/accounts/:accountId', { schema: { params: AccountId } }, (request) =>
      showAccount(sql, request.params.accountId),
    );
    app.get(
      '/keys',
      {
        schema: {
          querystring: z.object({
            account: z.string().min(1).optional(),
            sub_account: z.string().min(1).optional(),
          }),
        },
      },
      (request) => listKeys(sql, request.query.account, request.query.sub_account),
    );
    app.get('/accounts/:accountId/balance', { schema: { params: AccountId } }, (request) =>
      accountBalance(sql, request.params.accountId),
    );
    app.get(
      '/accounts/:accountId/usage',
      { schema: { params: AccountId, querystring: z.object({ month: Month.optional() }) } },
      (request) => accountUsage(sql, request.params.accountId, request.query.month),
    );
  };
