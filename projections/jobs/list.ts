import type { Sql } from '../types.ts';

export interface JobListRow {
  job_id: string;
  sub_account_id: string | null;
  modality: string;
  model: string;
  status: string;
  created_at: Date;
  updated_at: Date;
}

/**
 * A page of an account's jobs, newest first (a sub-account's only, when given); one more than `limit` is read to
 * tell whether more follow. `after` is a job id the page starts after.
 */
export async function listJobs(
  sql: Sql,
  owner: { accountId: string; subAccountId: string | null },
  page: { limit: number; after?: string; statuses?: string[] },
): Promise<JobListRow[]> {
  const { rows } = await sql.query<JobListRow & Record<string, unknown>>(
    `SELECT job_id, sub_account_id, modality, model, status, created_at, updated_at FROM jobs
     WHERE account_id = $1 AND ($2::text IS NULL OR sub_account_id = $2) AND ($3::text[] IS NULL OR status = ANY($3))
       AND ($4::text IS NULL OR (created_at, job_id) < (SELECT created_at, job_id FROM jobs
         WHERE account_id = $1 AND job_id = $4))
     ORDER BY created_at DESC, job_id DESC LIMIT $5`,
    [owner.accountId, owner.subAccountId, page.statuses ?? null, page.after ?? null, page.limit + 1],
  );
  return rows;
}
