import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type pg from 'pg';
import { z } from 'zod';
import type { ReconciliationRowData } from '../../../../events/reconciliation.ts';
import { listReconciliations } from '../../../../projections/reconciliations/index.ts';
import type { ReconcileOutcome, Reconciler } from '../../../reconciliation/reconciler.ts';

const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a UTC day as YYYY-MM-DD');

const row = (r: ReconciliationRowData) => ({
  credential: r.credential,
  model: r.model,
  ledger_nanos: r.ledgerNanos,
  provider_nanos: r.providerNanos,
  variance_nanos: r.varianceNanos,
  variance_percent: r.variancePercent,
  flagged: r.flagged,
});

const outcome = ({ reconciliation: d, appended }: ReconcileOutcome) => ({
  provider: d.provider,
  day: d.day,
  run: d.run,
  reconciled_at: d.at,
  threshold_percent: d.thresholdPercent,
  ledger_nanos: d.ledgerNanos,
  provider_nanos: d.providerNanos,
  flagged: d.flagged,
  rows: d.rows.map(row),
  appended,
});

/**
 * The providers' reconciliations (docs/billing.md, Reconciliation): the latest run per provider and day from the read
 * model, and a run on demand (`gateway reconcile --day`), for one provider or every one with an admin key.
 */
export const adminReconciliationRoutes =
  (pool: pg.Pool, reconciler: Reconciler): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      '/reconciliation',
      {
        schema: {
          querystring: z.object({
            day: Day.optional(),
            provider: z.string().min(1).max(64).optional(),
            limit: z.coerce.number().int().min(1).max(1000).default(100),
          }),
        },
      },
      async (request) => ({ object: 'list', data: await listReconciliations(pool, request.query) }),
    );
    app.post(
      '/reconciliation',
      { schema: { body: z.object({ day: Day, provider: z.string().min(1).max(64).optional() }) } },
      async (request) => {
        const providers = request.body.provider ? [request.body.provider] : reconciler.providers();
        const data = [];
        for (const provider of providers)
          data.push(outcome(await reconciler.reconcile(provider, request.body.day)));
        return { object: 'list', data };
      },
    );
  };
