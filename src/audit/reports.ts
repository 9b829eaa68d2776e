import type pg from 'pg';

export interface AuditReportRow {
  at: Date;
  /** `all accounts`, or `account <id>`. */
  scope: string;
  ok: boolean;
  report: string;
}

const TABLE = `CREATE TABLE IF NOT EXISTS audit_reports (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL,
  scope text NOT NULL,
  ok boolean NOT NULL,
  report text NOT NULL
)`;

/**
 * Keeps each audit's report beside the read models (not in the log: it is an opinion about the log, not a fact of
 * it), so the operator's dashboard shows the latest, whether the CLI or the dashboard ran it. At most 100 are kept.
 */
export async function saveAuditReport(pool: pg.Pool, row: AuditReportRow): Promise<void> {
  await pool.query(TABLE);
  await pool.query('INSERT INTO audit_reports (at, scope, ok, report) VALUES ($1, $2, $3, $4)', [
    row.at,
    row.scope,
    row.ok,
    row.report,
  ]);
  await pool.query(
    'DELETE FROM audit_reports WHERE id <= (SELECT id FROM audit_reports ORDER BY id DESC OFFSET 100 LIMIT 1)',
  );
}

export async function latestAuditReport(pool: pg.Pool): Promise<AuditReportRow | undefined> {
  try {
    const { rows } = await pool.query<AuditReportRow>(
      'SELECT at, scope, ok, report FROM audit_reports ORDER BY id DESC LIMIT 1',
    );
    return rows[0];
  } catch (error) {
    // No audit has ever run here: the table is made by the first.
    if ((error as { code?: string }).code === '42P01') return undefined;
    throw error;
  }
}
