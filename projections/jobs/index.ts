import type { Projection, Sql } from '../types.ts';

/**
 * Jobs as the worker needs them: which are due for an attempt, which are being polled at a provider. The API's
 * own view of one job is folded from the job's stream (read-your-writes); this table is for finding work.
 */
export const jobsProjection: Projection = {
  name: 'jobs',
  version: 3,
  tables: {
    jobs: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      job_id text PRIMARY KEY,
      account_id text NOT NULL,
      sub_account_id text,
      modality text NOT NULL,
      model text NOT NULL,
      status text NOT NULL,
      attempt integer NOT NULL DEFAULT 0,
      lease_until timestamptz,
      retry_at timestamptz,
      provider_job_id text,
      webhook_url text,
      cancel_charge text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    CREATE INDEX ON ${t} (status) WHERE status IN ('queued', 'processing') OR cancel_charge = 'pending'`,
  },
  canHandle: [
    'JobQueued',
    'JobClaimed',
    'JobSubmitted',
    'JobAttemptFailed',
    'JobCompleted',
    'JobFailed',
    'JobCancelled',
    'JobCancelCharged',
  ],
  async evolve(sql, t, event, stored) {
    const at = stored.occurredAt;
    switch (event.type) {
      case 'JobQueued': {
        const d = event.data;
        await sql.query(
          `INSERT INTO ${t.jobs} (job_id, account_id, sub_account_id, modality, model, status, webhook_url,
             created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, 'queued', $6, $7, $7) ON CONFLICT (job_id) DO NOTHING`,
          [d.jobId, d.accountId, d.subAccountId, d.modality, d.model, d.webhookUrl, at],
        );
        return;
      }
      case 'JobClaimed':
        await sql.query(
          `UPDATE ${t.jobs} SET status = 'processing', attempt = $2, lease_until = $3, retry_at = NULL,
             provider_job_id = NULL, updated_at = $4 WHERE job_id = $1`,
          [event.data.jobId, event.data.attempt, event.data.leaseUntil, at],
        );
        return;
      case 'JobSubmitted':
        await sql.query(
          `UPDATE ${t.jobs} SET provider_job_id = $2, lease_until = NULL, updated_at = $3 WHERE job_id = $1`,
          [event.data.jobId, event.data.providerJobId, at],
        );
        return;
      case 'JobAttemptFailed':
        await sql.query(
          `UPDATE ${t.jobs} SET status = 'queued', retry_at = $2, lease_until = NULL, provider_job_id = NULL,
             updated_at = $3 WHERE job_id = $1`,
          [event.data.jobId, event.data.retryAt, at],
        );
        return;
      case 'JobCompleted':
        return end(sql, `${t.jobs}`, event.data.jobId, 'completed', at);
      case 'JobFailed':
        return end(sql, `${t.jobs}`, event.data.jobId, 'failed', at);
      case 'JobCancelled':
        // A cancellation after hand-off keeps the claim's lease: its charge is due from a worker.
        await sql.query(
          `UPDATE ${t.jobs} SET status = 'cancelled', cancel_charge = $2,
             lease_until = CASE WHEN $2::text IS NULL THEN NULL ELSE lease_until END, updated_at = $3
           WHERE job_id = $1`,
          [event.data.jobId, event.data.billable ? 'pending' : null, at],
        );
        return;
      case 'JobCancelCharged':
        await sql.query(
          `UPDATE ${t.jobs} SET cancel_charge = 'charged', lease_until = NULL, updated_at = $2 WHERE job_id = $1`,
          [event.data.jobId, at],
        );
        return;
      default:
        return;
    }
  },
};

async function end(sql: Sql, table: string, jobId: string, status: string, at: Date): Promise<void> {
  await sql.query(`UPDATE ${table} SET status = $2, lease_until = NULL, updated_at = $3 WHERE job_id = $1`, [
    jobId,
    status,
    at,
  ]);
}

export interface DueJob {
  job_id: string;
  status: 'queued' | 'processing' | 'cancelled';
  provider_job_id: string | null;
}

/**
 * Jobs a worker should look at now: queued ones past their retry time, claims whose lease ran out before the
 * provider took the work, submitted ones to poll, and cancellations after hand-off whose charge is still due (the
 * cancelling request charges a submitted one itself, so those are taken after `cancelGraceMs`; one whose submission
 * was in flight is charged by the worker submitting it, or after its lease). Oldest first.
 */
export async function dueJobs(sql: Sql, now: Date, limit = 50, cancelGraceMs = 60_000): Promise<DueJob[]> {
  const { rows } = await sql.query<DueJob & Record<string, unknown>>(
    `SELECT job_id, status, provider_job_id FROM jobs
      WHERE (status = 'queued' AND (retry_at IS NULL OR retry_at <= $1))
         OR (status = 'processing' AND (provider_job_id IS NOT NULL OR lease_until <= $1))
         OR (cancel_charge = 'pending' AND (lease_until <= $1 OR (provider_job_id IS NOT NULL AND updated_at <= $3)))
      ORDER BY created_at LIMIT $2`,
    [now, limit, new Date(now.getTime() - cancelGraceMs)],
  );
  return rows;
}

/**
 * Ended jobs with a webhook_url whose delivery was never requested (the gateway stopped between recording the end
 * and requesting the webhook), once `graceMs` has passed since the end. Requesting is idempotent per job.
 */
export async function jobsAwaitingWebhook(
  sql: Sql,
  now: Date,
  graceMs: number,
  limit = 50,
): Promise<string[]> {
  const { rows } = await sql.query<{ job_id: string }>(
    `SELECT j.job_id FROM jobs j
      WHERE j.webhook_url IS NOT NULL AND j.status IN ('completed', 'failed', 'cancelled') AND j.updated_at <= $1
        AND j.cancel_charge IS DISTINCT FROM 'pending'
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.source = 'job:' || j.job_id)
      ORDER BY j.updated_at LIMIT $2`,
    [new Date(now.getTime() - graceMs), limit],
  );
  return rows.map((row) => row.job_id);
}
