import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { monthOf } from '../../../../events/budget.ts';
import { routingBy } from '../../../../projections/routing/index.ts';
import type { Sql } from '../../../../projections/types.ts';
import { usageBy, usageByModel } from '../../../../projections/usage/index.ts';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import { nanosToCents } from '../../../contracts/money.ts';

export const Month = z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'a month as YYYY-MM');
export const currentMonth = () => monthOf(new Date());

export interface UsageLine {
  key: string;
  requests: number;
  /** What the account paid. */
  cost_cents: number;
  /** The exact figure behind cost_cents, for sums. */
  costNanos: bigint;
  /** What the requester was charged: a sub-account's price (docs/billing.md, Reselling); the cost otherwise. */
  priceNanos: bigint;
  units: number;
  /** Requests the automatic router chose the model of, and what they saved against their baselines. */
  routed_requests: number;
  saved_cents: number;
  savedNanos: bigint;
}

export async function usageRows(
  sql: Sql,
  group: 'tag' | 'own_tag' | 'sub_account_id',
  accountId: string,
  month: string,
  subAccountId?: string,
): Promise<UsageLine[]> {
  const [usage, routing] = await Promise.all([
    usageBy(sql, group, accountId, month, subAccountId),
    routingBy(sql, group, accountId, month, subAccountId),
  ]);
  const routed = new Map(routing.map((row) => [row.key, row]));
  return usage.map((row) => {
    const savedNanos = BigInt(routed.get(row.key)?.saved_nanos ?? '0');
    return {
      key: row.key,
      requests: Number(row.requests),
      cost_cents: nanosToCents(BigInt(row.cost_nanos)),
      costNanos: BigInt(row.cost_nanos),
      priceNanos: BigInt(row.price_nanos),
      units: Number(row.units),
      routed_requests: Number(routed.get(row.key)?.routed_requests ?? 0),
      saved_cents: nanosToCents(savedNanos),
      savedNanos,
    };
  });
}

/** Usage reports from the usage read model. A sub-account key sees only its own usage. */
export const usageRoutes =
  (sql: Sql, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    const query = { querystring: z.object({ month: Month.optional() }) };
    app.get('/usage/by-tag', { schema: query }, async (request) => {
      const month = request.query.month ?? currentMonth();
      // A sub-account sees its spending by the tags it sent; the account, by the tags whose budgets it spent.
      const rows = await usageRows(
        sql,
        request.auth.subAccountId ? 'own_tag' : 'tag',
        request.auth.accountId,
        month,
        request.auth.subAccountId ?? undefined,
      );
      // A sub-account's own view is in its price, as everything it is charged.
      const own = request.auth.subAccountId !== null;
      return {
        month,
        data: rows.map((row) => ({
          tag: row.key,
          requests: row.requests,
          cost_cents: own ? nanosToCents(row.priceNanos) : row.cost_cents,
          units: row.units,
          routed_requests: row.routed_requests,
          saved_cents: row.saved_cents,
        })),
      };
    });
    app.get('/usage/by-sub-account', { schema: query }, async (request) => {
      const month = request.query.month ?? currentMonth();
      const rows = await usageRows(
        sql,
        'sub_account_id',
        request.auth.accountId,
        month,
        request.auth.subAccountId ?? undefined,
      );
      return {
        month,
        data: rows
          .filter((row) => row.key !== '')
          .map((row) => {
            const sub = live.subAccount(row.key);
            // The customer's price; with the main key, what the account paid for it and the margin between.
            return {
              sub_account_id: row.key,
              name: sub?.name ?? null,
              external_ref: sub?.externalRef ?? null,
              requests: row.requests,
              cost_cents: nanosToCents(row.priceNanos),
              ...(request.auth.subAccountId === null && {
                account_cost_cents: row.cost_cents,
                margin_cents: nanosToCents(row.priceNanos - row.costNanos),
              }),
              units: row.units,
              routed_requests: row.routed_requests,
              saved_cents: row.saved_cents,
            };
          }),
      };
    });
    // The usage read model's model dimension: every charge of the balance, by the model it was charged for.
    app.get('/usage/by-model', { schema: query }, async (request) => {
      const month = request.query.month ?? currentMonth();
      const rows = await usageByModel(
        sql,
        { accountId: request.auth.accountId, subAccountId: request.auth.subAccountId },
        month,
      );
      return {
        month,
        data: rows.map((row) => ({
          model: row.model,
          requests: Number(row.requests),
          cost_cents: nanosToCents(
            BigInt(request.auth.subAccountId === null ? row.cost_nanos : row.price_nanos),
          ),
        })),
      };
    });
  };
