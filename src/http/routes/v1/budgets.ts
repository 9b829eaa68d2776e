import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Sql } from '../../../../projections/types.ts';
import type { AccountService } from '../../../accounts/service.ts';
import { CostTag } from '../../../chat/request.ts';
import { currentMonth, usageRows } from './usage.ts';

/** Monthly caps per cost tag (UTC calendar months), enforced by every reservation. Main keys only. */
export const budgetRoutes =
  (accounts: AccountService, sql: Sql): FastifyPluginAsyncZod =>
  async (app) => {
    const config = { mainKeyOnly: true };
    const body = z.object({
      tag: CostTag,
      cap_cents: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    });
    app.post('/budgets', { config, schema: { body } }, async (request) => {
      const { tag, cap_cents } = request.body;
      await accounts.setTagBudget(request.auth.accountId, tag, cap_cents, request.id);
      const month = currentMonth();
      const spent = (await usageRows(sql, 'tag', request.auth.accountId, month)).find((r) => r.key === tag);
      return { object: 'budget', tag, cap_cents, month, spent_cents: spent?.cost_cents ?? 0 };
    });
  };
