import type { Projection } from '../types.ts';

/**
 * Each provider's reconciliation per UTC day, as its latest run left it (docs/billing.md, Reconciliation): the
 * totals in `reconciliations`, one row per credential and model in `reconciliation_rows`. A later run of the same
 * provider and day replaces both.
 */
export const reconciliationsProjection: Projection = {
  name: 'reconciliations',
  version: 1,
  tables: {
    reconciliations: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      provider text NOT NULL,
      day date NOT NULL,
      run integer NOT NULL,
      reconciled_at timestamptz NOT NULL,
      threshold_percent numeric NOT NULL,
      ledger_nanos numeric(38, 0) NOT NULL,
      provider_nanos numeric(38, 0) NOT NULL,
      flagged boolean NOT NULL,
      PRIMARY KEY (provider, day)
    )`,
    reconciliation_rows: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      provider text NOT NULL,
      day date NOT NULL,
      credential text NOT NULL,
      model text NOT NULL,
      ledger_nanos numeric(38, 0) NOT NULL,
      provider_nanos numeric(38, 0) NOT NULL,
      variance_nanos numeric(38, 0) NOT NULL,
      variance_percent numeric,
      flagged boolean NOT NULL,
      PRIMARY KEY (provider, day, credential, model)
    )`,
  },
  canHandle: ['ProviderReconciled'],
  async evolve(sql, t, event) {
    if (event.type !== 'ProviderReconciled') return;
    const d = event.data;
    // An older run folded again (a replay) never undoes a newer one. Writes are batched (no branching on their
    // results), so the rows are replaced only where the head now stands at this run.
    await sql.query(
      `INSERT INTO ${t.reconciliations} (provider, day, run, reconciled_at, threshold_percent, ledger_nanos,
         provider_nanos, flagged) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (provider, day) DO UPDATE SET run = EXCLUDED.run, reconciled_at = EXCLUDED.reconciled_at,
         threshold_percent = EXCLUDED.threshold_percent, ledger_nanos = EXCLUDED.ledger_nanos,
         provider_nanos = EXCLUDED.provider_nanos, flagged = EXCLUDED.flagged
       WHERE ${t.reconciliations}.run < EXCLUDED.run`,
      [d.provider, d.day, d.run, d.at, d.thresholdPercent, d.ledgerNanos, d.providerNanos, d.flagged],
    );
    const current = `(SELECT run FROM ${t.reconciliations} WHERE provider = $1 AND day = $2) = $3`;
    await sql.query(`DELETE FROM ${t.reconciliation_rows} WHERE provider = $1 AND day = $2 AND ${current}`, [
      d.provider,
      d.day,
      d.run,
    ]);
    for (const r of d.rows) {
      await sql.query(
        `INSERT INTO ${t.reconciliation_rows} (provider, day, credential, model, ledger_nanos, provider_nanos,
           variance_nanos, variance_percent, flagged)
         SELECT $1, $2, $4, $5, $6, $7, $8, $9, $10 WHERE ${current}`,
        [
          d.provider,
          d.day,
          d.run,
          r.credential,
          r.model,
          r.ledgerNanos,
          r.providerNanos,
          r.varianceNanos,
          r.variancePercent,
          r.flagged,
        ],
      );
    }
  },
};

export interface ReconciliationView {
  provider: string;
  day: string;
  run: number;
  reconciled_at: string;
  threshold_percent: number;
  ledger_nanos: string;
  provider_nanos: string;
  flagged: boolean;
  rows: {
    credential: string;
    model: string;
    ledger_nanos: string;
    provider_nanos: string;
    variance_nanos: string;
    variance_percent: number | null;
    flagged: boolean;
  }[];
}

interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

/** The latest reconciliations, newest day first, filtered by day and provider when given. */
export async function listReconciliations(
  pool: Queryable,
  filter: { day?: string; provider?: string; limit?: number },
): Promise<ReconciliationView[]> {
  const heads = await pool.query(
    `SELECT provider, to_char(day, 'YYYY-MM-DD') AS day, run, reconciled_at, threshold_percent::float8 AS threshold,
       ledger_nanos::text AS ledger, provider_nanos::text AS billed, flagged
     FROM reconciliations WHERE ($1::date IS NULL OR day = $1::date) AND ($2::text IS NULL OR provider = $2)
     ORDER BY day DESC, provider LIMIT $3`,
    [filter.day ?? null, filter.provider ?? null, filter.limit ?? 100],
  );
  const rows = await pool.query(
    `SELECT provider, to_char(day, 'YYYY-MM-DD') AS day, credential, model, ledger_nanos::text AS ledger,
       provider_nanos::text AS billed, variance_nanos::text AS variance, variance_percent::float8 AS percent, flagged
     FROM reconciliation_rows WHERE ($1::date IS NULL OR day = $1::date) AND ($2::text IS NULL OR provider = $2)
     ORDER BY credential, model`,
    [filter.day ?? null, filter.provider ?? null],
  );
  return heads.rows.map((h) => ({
    provider: h.provider as string,
    day: h.day as string,
    run: h.run as number,
    reconciled_at: new Date(h.reconciled_at as string).toISOString(),
    threshold_percent: h.threshold as number,
    ledger_nanos: h.ledger as string,
    provider_nanos: h.billed as string,
    flagged: h.flagged as boolean,
    rows: rows.rows
      .filter((r) => r.provider === h.provider && r.day === h.day)
      .map((r) => ({
        credential: r.credential as string,
        model: r.model as string,
        ledger_nanos: r.ledger as string,
        provider_nanos: r.billed as string,
        variance_nanos: r.variance as string,
        variance_percent: (r.percent as number | null) ?? null,
        flagged: r.flagged as boolean,
      })),
  }));
}
