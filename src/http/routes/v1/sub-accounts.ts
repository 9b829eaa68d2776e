import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Sql } from '../../../../projections/types.ts';
import { statementCsv } from '../../../accounts/statement.ts';
import type { SubAccounts } from '../../../accounts/sub-accounts.ts';
import { CostTag } from '../../../chat/request.ts';
import { nanosToCents } from '../../../contracts/money.ts';
import { currentMonth, Month, usageRows } from './usage.ts';

const Id = z.object({ id: z.string().min(1) });

/** 0 to 1000 percent, in hundredths of a percent at the finest (kept as an integer of those). */
const MarkupPercent = z
  .number()
  .min(0)
  .max(1000)
  .refine((n) => Math.abs(n * 100 - Math.round(n * 100)) < 1e-6, 'at most two decimals');

/** A model id, or a pattern of one where `*` stands for any run of characters (`openai/*`, `*mini*`). */
const ModelPattern = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9._:/@*-]+$/, 'a model id or a pattern of one, with * for any run of characters');

/** A sub-account's settings as `POST /v1/sub-accounts` takes them (the dashboard checks its forms with it too). */
export const Settings = z.object({
  name: z.string().trim().min(1).max(200),
  spend_cap_cents: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  external_ref: z.string().max(200).nullable().optional(),
  rate_limit_rpm: z.number().int().positive().max(1_000_000).optional(),
  default_tag: CostTag.nullable().optional(),
  markup_percent: MarkupPercent.optional(),
  price_overrides: z
    .array(z.object({ model: ModelPattern, markup_percent: MarkupPercent }).strict())
    .max(100)
    .optional(),
  spend_cap_reset: z.enum(['daily', 'weekly', 'monthly']).nullable().optional(),
  rate_limit_tpm: z.number().int().positive().max(1_000_000_000).nullable().optional(),
  allowed_models: z.array(ModelPattern).max(200).nullable().optional(),
});

/** Management of sub-accounts: main keys only (the route table marks them so). */
export const subAccountRoutes =
  (subAccounts: SubAccounts, sql: Sql): FastifyPluginAsyncZod =>
  async (app) => {
    const config = { mainKeyOnly: true };
    app.post('/sub-accounts', { config, schema: { body: Settings } }, (request) =>
      subAccounts.create(request.auth, request.body, request.id),
    );
    app.get('/sub-accounts', { config }, async (request) => ({
      object: 'list',
      data: await subAccounts.list(request.auth),
    }));
    app.get('/sub-accounts/:id', { config, schema: { params: Id } }, (request) =>
      subAccounts.get(request.auth, request.params.id),
    );
    app.patch('/sub-accounts/:id', { config, schema: { params: Id, body: Settings.partial() } }, (request) =>
      subAccounts.update(request.auth, request.params.id, request.body, request.id),
    );
    app.delete('/sub-accounts/:id', { config, schema: { params: Id } }, (request) =>
      subAccounts.delete(request.auth, request.params.id, request.id),
    );
    app.get(
      '/sub-accounts/:id/usage',
      { config, schema: { params: Id, querystring: z.object({ month: Month.optional() }) } },
      async (request) => {
        const record = await subAccounts.get(request.auth, request.params.id);
        const month = request.query.month ?? currentMonth();
        const byTag = await usageRows(sql, 'tag', request.auth.accountId, month, record.id);
        const total = byTag.reduce(
          (sum, row) => ({
            requests: sum.requests + row.requests,
            costNanos: sum.costNanos + row.costNanos,
            priceNanos: sum.priceNanos + row.priceNanos,
            units: sum.units + row.units,
            routed: sum.routed + row.routed_requests,
            savedNanos: sum.savedNanos + row.savedNanos,
          }),
          { requests: 0, costNanos: 0n, priceNanos: 0n, units: 0, routed: 0, savedNanos: 0n },
        );
        // The customer's price, what the account paid for it, and the account's margin between the two.
        const money = (price: bigint, cost: bigint) => ({
          cost_cents: nanosToCents(price),
          account_cost_cents: nanosToCents(cost),
          margin_cents: nanosToCents(price - cost),
        });
        return {
          object: 'sub_account.usage',
          sub_account_id: record.id,
          external_ref: record.external_ref,
          month,
          requests: total.requests,
          ...money(total.priceNanos, total.costNanos),
          units: total.units,
          routed_requests: total.routed,
          saved_cents: nanosToCents(total.savedNanos),
          spend_cap_cents: record.spend_cap_cents,
          spent_cents: record.spent_cents,
          by_tag: byTag.map((row) => ({
            tag: row.key,
            requests: row.requests,
            ...money(row.priceNanos, row.costNanos),
            units: row.units,
            routed_requests: row.routed_requests,
            saved_cents: row.saved_cents,
          })),
        };
      },
    );
    // What the customer is invoiced: JSON, or CSV with `Accept: text/csv` (src/accounts/statement.ts).
    app.get(
      '/sub-accounts/:id/statement',
      { config, schema: { params: Id, querystring: z.object({ month: Month.optional() }) } },
      async (request, reply) => {
        const month = request.query.month ?? currentMonth();
        const statement = await subAccounts.statement(request.auth, request.params.id, month);
        if (!prefersCsv(request.headers.accept)) return statement;
        return reply
          .type('text/csv; charset=utf-8')
          .header(
            'content-disposition',
            `attachment; filename="statement-${statement.sub_account_id}-${month}.csv"`,
          )
          .send(statementCsv(statement));
      },
    );
  };

/** Whether the client asked for CSV before JSON (`Accept: text/csv`). */
function prefersCsv(accept: string | undefined): boolean {
  const types = (accept ?? '').split(',').map((part) => part.split(';')[0]?.trim().toLowerCase());
  const csv = types.indexOf('text/csv');
  const json = types.indexOf('application/json');
  return csv >= 0 && (json < 0 || csv < json);
}
