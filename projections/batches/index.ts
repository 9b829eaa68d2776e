import type { Projection, Sql } from '../types.ts';

const AT_COLUMN = {
  BatchFinalizing: 'finalizing_at',
  BatchCompleted: 'completed_at',
  BatchExpired: 'expired_at',
  BatchCancelled: 'cancelled_at',
  BatchFailed: 'failed_at',
} as const;

const STATUS = {
  BatchFinalizing: 'finalizing',
  BatchCompleted: 'completed',
  BatchExpired: 'expired',
  BatchCancelled: 'cancelled',
  BatchFailed: 'failed',
} as const;

/** Batches as they stand: status, request counts, the timestamps of each transition, the result files. */
export const batchesProjection: Projection = {
  name: 'batches',
  version: 1,
  tables: {
    batches: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      batch_id text PRIMARY KEY,
      account_id text NOT NULL,
      sub_account_id text,
      tag text,
      input_file_id text NOT NULL,
      endpoint text NOT NULL,
      completion_window text NOT NULL,
      metadata jsonb,
      status text NOT NULL,
      total integer NOT NULL DEFAULT 0,
      completed integer NOT NULL DEFAULT 0,
      failed integer NOT NULL DEFAULT 0,
      errors jsonb,
      output_file_id text,
      error_file_id text,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      in_progress_at timestamptz,
      finalizing_at timestamptz,
      completed_at timestamptz,
      failed_at timestamptz,
      expired_at timestamptz,
      cancelling_at timestamptz,
      cancelled_at timestamptz
    );
    CREATE INDEX ON ${t} (account_id, created_at DESC, batch_id DESC);
    CREATE INDEX ON ${t} (created_at) WHERE status IN ('validating', 'queued', 'in_progress', 'finalizing', 'cancelling')`,
  },
  canHandle: [
    'BatchCreated',
    'BatchValidated',
    'BatchStarted',
    'BatchLineFinished',
    'BatchCancelRequested',
    'BatchFinalizing',
    'BatchCompleted',
    'BatchExpired',
    'BatchCancelled',
    'BatchFailed',
  ],
  async evolve(sql, t, event, stored) {
    const at = stored.occurredAt;
    switch (event.type) {
      case 'BatchCreated': {
        const d = event.data;
        await sql.query(
          `INSERT INTO ${t.batches} (batch_id, account_id, sub_account_id, tag, input_file_id, endpoint, completion_window,
             metadata, status, created_at, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'validating', $9, $10) ON CONFLICT (batch_id) DO NOTHING`,
          [
            d.batchId,
            d.accountId,
            d.subAccountId,
            d.tag,
            d.inputFileId,
            d.endpoint,
            d.completionWindow,
            d.metadata === null ? null : JSON.stringify(d.metadata),
            at,
            d.expiresAt,
          ],
        );
        return;
      }
      case 'BatchValidated':
        await sql.query(
          `UPDATE ${t.batches} SET status = CASE WHEN status = 'validating' THEN 'queued' ELSE status END,
             total = $2, failed = failed + $3 WHERE batch_id = $1`,
          [event.data.batchId, event.data.total, event.data.invalid.length],
        );
        return;
      case 'BatchStarted':
        await sql.query(
          `UPDATE ${t.batches} SET status = CASE WHEN status = 'queued' THEN 'in_progress' ELSE status END,
             in_progress_at = coalesce(in_progress_at, $2) WHERE batch_id = $1`,
          [event.data.batchId, at],
        );
        return;
      case 'BatchLineFinished': {
        const ok = event.data.statusCode >= 200 && event.data.statusCode < 300;
        await sql.query(
          `UPDATE ${t.batches} SET completed = completed + $2, failed = failed + $3 WHERE batch_id = $1`,
          [event.data.batchId, ok ? 1 : 0, ok ? 0 : 1],
        );
        return;
      }
      case 'BatchCancelRequested':
        await sql.query(
          `UPDATE ${t.batches} SET status = 'cancelling', cancelling_at = $2 WHERE batch_id = $1`,
          [event.data.batchId, at],
        );
        return;
      case 'BatchFinalizing':
        await sql.query(
          `UPDATE ${t.batches} SET status = $2, ${AT_COLUMN[event.type]} = $3 WHERE batch_id = $1`,
          [event.data.batchId, STATUS[event.type], at],
        );
        return;
      case 'BatchCompleted':
      case 'BatchExpired':
      case 'BatchCancelled': {
        const d = event.data;
        await sql.query(
          `UPDATE ${t.batches} SET status = $2, ${AT_COLUMN[event.type]} = $3, output_file_id = $4, error_file_id = $5,
             completed = $6, failed = $7 WHERE batch_id = $1`,
          [d.batchId, STATUS[event.type], at, d.outputFileId, d.errorFileId, d.completed, d.failed],
        );
        return;
      }
      case 'BatchFailed':
        await sql.query(
          `UPDATE ${t.batches} SET status = 'failed', failed_at = $2, errors = $3 WHERE batch_id = $1`,
          [event.data.batchId, at, JSON.stringify(event.data.errors)],
        );
        return;
      default:
        return;
    }
  },
};

export interface BatchRow {
  batch_id: string;
  account_id: string;
  sub_account_id: string | null;
  tag: string | null;
  input_file_id: string;
  endpoint: string;
  completion_window: string;
  metadata: Record<string, string> | null;
  status: string;
  total: number;
  completed: number;
  failed: number;
  errors: { code: string; message: string; line: number | null; param: string | null }[] | null;
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: Date;
  expires_at: Date;
  in_progress_at: Date | null;
  finalizing_at: Date | null;
  completed_at: Date | null;
  failed_at: Date | null;
  expired_at: Date | null;
  cancelling_at: Date | null;
  cancelled_at: Date | null;
}

export async function batchRow(sql: Sql, batchId: string): Promise<BatchRow | undefined> {
  const { rows } = await sql.query<BatchRow & Record<string, unknown>>(
    'SELECT * FROM batches WHERE batch_id = $1',
    [batchId],
  );
  return rows[0];
}

/** The owner's batches, newest first, after the batch `after`; one more than `limit` tells whether more follow. */
export async function listBatches(
  sql: Sql,
  owner: { accountId: string; subAccountId: string | null },
  query: { limit: number; after?: string },
): Promise<BatchRow[]> {
  const { rows } = await sql.query<BatchRow & Record<string, unknown>>(
    `SELECT * FROM batches
     WHERE account_id = $1 AND sub_account_id IS NOT DISTINCT FROM $2
       AND ($3::text IS NULL OR (created_at, batch_id) < (
         SELECT created_at, batch_id FROM batches WHERE batch_id = $3 AND account_id = $1))
     ORDER BY created_at DESC, batch_id DESC LIMIT $4`,
    [owner.accountId, owner.subAccountId, query.after ?? null, query.limit + 1],
  );
  return rows;
}

/**
 * Batches a worker has something to do for, taking turns between accounts: every account's oldest, oldest first,
 * then every account's second oldest, and so on. One account's many batches do not push another's off the page.
 */
export async function dueBatches(
  sql: Sql,
  limit: number,
): Promise<{ batchId: string; accountId: string; status: string }[]> {
  const { rows } = await sql.query<{ batch_id: string; account_id: string; status: string }>(
    `SELECT batch_id, account_id, status FROM batches
     WHERE status IN ('validating', 'queued', 'in_progress', 'finalizing', 'cancelling')
     ORDER BY row_number() OVER (PARTITION BY account_id ORDER BY created_at, batch_id), created_at, batch_id
     LIMIT $1`,
    [limit],
  );
  return rows.map((row) => ({ batchId: row.batch_id, accountId: row.account_id, status: row.status }));
}

/** The batch's status as the read model has it; a running batch looks here for a cancellation. */
export async function batchStatus(sql: Sql, batchId: string): Promise<string | undefined> {
  const { rows } = await sql.query<{ status: string }>('SELECT status FROM batches WHERE batch_id = $1', [
    batchId,
  ]);
  return rows[0]?.status;
}
