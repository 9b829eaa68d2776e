import type { Projection, Sql } from '../types.ts';

/** Stored files, uploads and batch outputs; a deleted file keeps its row with `deleted_at`. */
export const filesProjection: Projection = {
  name: 'files',
  version: 1,
  tables: {
    files: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      file_id text PRIMARY KEY,
      account_id text NOT NULL,
      sub_account_id text,
      filename text NOT NULL,
      bytes bigint NOT NULL,
      purpose text NOT NULL,
      sha256 text NOT NULL,
      blob_key text NOT NULL,
      content_type text NOT NULL,
      batch_id text,
      created_at timestamptz NOT NULL,
      deleted_at timestamptz
    );
    CREATE INDEX ON ${t} (account_id, created_at DESC, file_id DESC)`,
  },
  canHandle: ['FileUploaded', 'FileDeleted'],
  async evolve(sql, t, event, stored) {
    switch (event.type) {
      case 'FileUploaded': {
        const d = event.data;
        await sql.query(
          `INSERT INTO ${t.files} (file_id, account_id, sub_account_id, filename, bytes, purpose, sha256, blob_key,
             content_type, batch_id, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (file_id) DO NOTHING`,
          [
            d.fileId,
            d.accountId,
            d.subAccountId,
            d.filename,
            d.bytes,
            d.purpose,
            d.sha256,
            d.blobKey,
            d.contentType,
            d.batchId,
            stored.occurredAt,
          ],
        );
        return;
      }
      case 'FileDeleted':
        await sql.query(`UPDATE ${t.files} SET deleted_at = $2 WHERE file_id = $1 AND deleted_at IS NULL`, [
          event.data.fileId,
          stored.occurredAt,
        ]);
        return;
      default:
        return;
    }
  },
};

export interface FileRow {
  file_id: string;
  account_id: string;
  sub_account_id: string | null;
  filename: string;
  bytes: string;
  purpose: string;
  blob_key: string;
  content_type: string;
  created_at: Date;
}

const COLUMNS =
  'file_id, account_id, sub_account_id, filename, bytes, purpose, blob_key, content_type, created_at';

/** The owner's live files, newest first, after the file `after` (a cursor, as OpenAI's `after`). */
export async function listFiles(
  sql: Sql,
  owner: { accountId: string; subAccountId: string | null },
  query: { purpose?: string; limit: number; after?: string; order?: 'asc' | 'desc' },
): Promise<FileRow[]> {
  // `after` is the last file of the previous page in the order asked for, so each order walks its own way.
  const [before, direction] = query.order === 'asc' ? ['>', 'ASC'] : ['<', 'DESC'];
  const { rows } = await sql.query<FileRow & Record<string, unknown>>(
    `SELECT ${COLUMNS} FROM files f
     WHERE account_id = $1 AND sub_account_id IS NOT DISTINCT FROM $2 AND deleted_at IS NULL
       AND ($3::text IS NULL OR purpose = $3)
       AND ($4::text IS NULL OR (created_at, file_id) ${before} (
         SELECT created_at, file_id FROM files WHERE file_id = $4 AND account_id = $1))
     ORDER BY created_at ${direction}, file_id ${direction} LIMIT $5`,
    [owner.accountId, owner.subAccountId, query.purpose ?? null, query.after ?? null, query.limit],
  );
  return rows;
}

export async function fileRow(sql: Sql, fileId: string): Promise<FileRow | undefined> {
  const { rows } = await sql.query<FileRow & Record<string, unknown>>(
    `SELECT ${COLUMNS} FROM files WHERE file_id = $1 AND deleted_at IS NULL`,
    [fileId],
  );
  return rows[0];
}

/** Whether the file was deleted (false for a live file and for one not projected yet). */
export async function fileDeleted(sql: Sql, fileId: string): Promise<boolean> {
  const { rows } = await sql.query('SELECT 1 FROM files WHERE file_id = $1 AND deleted_at IS NOT NULL', [
    fileId,
  ]);
  return rows.length > 0;
}

/** Bytes of the account's live files, its sub-accounts' and batch outputs included (the storage quota's measure). */
export async function storedBytes(sql: Sql, accountId: string): Promise<number> {
  const { rows } = await sql.query<{ bytes: string }>(
    'SELECT COALESCE(SUM(bytes), 0)::text AS bytes FROM files WHERE account_id = $1 AND deleted_at IS NULL',
    [accountId],
  );
  return Number(rows[0]?.bytes ?? 0);
}
