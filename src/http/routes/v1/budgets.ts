import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Sql } from '../../../../projections/types.ts';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import type { AccountService } from '../../../accounts/service.ts';
import { CostTag } from '../../../chat/request.ts';
import { nanosToCents } from '../../../contracts/money.ts';
import { currentMonth, usageRows } from './usage.ts';

/** Monthly caps per cost tag (UTC calendar months), enforced by every reservation. Main keys only. */
export const budgetRoutes =
  (accounts: AccountService, sql: Sql, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    const config = { mainKeyOnly: true };
    const body = z.object({
      tag: CostTag,
      cap_cents: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    });
    const spentThisMonth = async (accountId: string) => {
      const month = currentMonth();
      const rows = await usageRows(sql, 'tag', accountId, month);
      return { month, spent: new Map(rows.map((r) => [r.key, r.cost_cents])) };
    };

    app.post('/budgets', { config, schema: { body } }, async (request) => {
      const { tag, cap_cents } = request.body;
      await accounts.setTagBudget(request.auth.accountId, tag, cap_cents, request.id);
      const { month, spent } = await spentThisMonth(request.auth.accountId);
      return { object: 'budget', tag, cap_cents, month, spent_cents: spent.get(tag) ?? 0 };
    });

    // The caps in force: the live state every reservation reads (a budget set or removed a moment ago shows at once).
    app.get('/budgets', { config }, async (request) => {
      const caps = live.account(request.auth.accountId)?.tagBudgets ?? new Map<string, bigint>();
      const { month, spent } = await spentThisMonth(request.auth.accountId);
      const data = [...caps]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([tag, cap]) => ({
          object: 'budget',
          tag,
          cap_cents: nanosToCents(cap),
          month,
          spent_cents: spent.get(tag) ?? 0,
        }));
      return { object: 'list', data };
    });

    app.delete(
      '/budgets/:tag',
      { config, schema: { params: z.object({ tag: CostTag }) } },
      async (request) => {
        const { tag } = request.params;
        await accounts.removeTagBudget(request.auth.accountId, tag, request.id);
        return { object: 'budget', tag, deleted: true };
      },
    );
  };
