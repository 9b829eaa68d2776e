import type { Projection } from '../types.ts';

/**
 * The request log: one row per `RequestCompleted`, the listing behind `GET /v1/requests`. Bodies are not here;
 * their hashes are, and the bytes live in the blob store under them.
 */
export const requestsProjection: Projection = {
  name: 'requests',
  // 3: client_request_id and batch_id (a reader's lookup by its own id; a batch line's record scoped as its batch).
  // 4: key_name and error_message (who asked, why it was refused), and the index of a key's last use.
  version: 4,
  tables: {
    request_log: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      log_id text PRIMARY KEY,
      request_id text NOT NULL,
      client_request_id text,
      batch_id text,
      account_id text NOT NULL,
      sub_account_id text,
      key_id text NOT NULL,
      key_name text,
      tag text,
      endpoint text NOT NULL,
      requested_model text,
      model text,
      provider text,
      status integer NOT NULL,
      error_type text,
      error_message text,
      stream boolean NOT NULL,
      usage jsonb,
      cost_nanos numeric NOT NULL,
      hold_id text,
      first_byte_ms integer,
      total_ms integer NOT NULL,
      attempts integer NOT NULL,
      fallbacks integer NOT NULL,
      cache_status text,
      cache jsonb,
      routing jsonb,
      request_sha256 text,
      response_sha256 text,
      bodies_kept boolean NOT NULL,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX ON ${t} (account_id, created_at DESC, log_id DESC);
    CREATE INDEX ON ${t} (account_id, request_id);
    CREATE INDEX ON ${t} (account_id, client_request_id) WHERE client_request_id IS NOT NULL;
    CREATE INDEX ON ${t} (account_id, key_id, created_at)`,
  },
  canHandle: ['RequestCompleted'],
  async evolve(sql, t, event) {
    if (event.type !== 'RequestCompleted') return;
    const d = event.data;
    await sql.query(
      `INSERT INTO ${t.request_log} (log_id, request_id, account_id, sub_account_id, key_id, tag, endpoint,
         requested_model, model, provider, status, error_type, stream, usage, cost_nanos, hold_id, first_byte_ms,
         total_ms, attempts, fallbacks, cache_status, routing, request_sha256, response_sha256, bodies_kept, created_at,
         cache, client_request_id, batch_id, key_name, error_message)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
         $23, $24, $25, $26, $27, $28, $29, $30, $31)
       ON CONFLICT (log_id) DO NOTHING`,
      [
        d.logId,
        d.requestId,
        d.accountId,
        d.subAccountId,
        d.keyId,
        d.tag,
        d.endpoint,
        d.requestedModel,
        d.model,
        d.provider,
        d.status,
        d.errorType,
        d.stream,
        d.usage === null ? null : JSON.stringify(d.usage),
        d.costNanos,
        d.holdId,
        d.firstByteMs,
        d.totalMs,
        d.attempts,
        d.fallbacks,
        d.cacheStatus,
        d.routing === null || d.routing === undefined ? null : JSON.stringify(d.routing),
        d.requestSha256,
        d.responseSha256,
        d.bodiesKept,
        d.at,
        d.cache === undefined ? null : JSON.stringify(d.cache),
        d.clientRequestId ?? null,
        d.batchLine?.batchId ?? legacyBatchOf(d),
        d.keyName ?? null,
        d.errorMessage ?? null,
      ],
    );
  },
};

/** A batch line's id (`src/batches/output.ts`): the gateway's own, `<batch id>-<line>`. */
const BATCH_LINE_ID = /^(batch_[0-9a-f]{24})-[1-9][0-9]*$/;

/**
 * The batch of a line's record written before records named their batch line: recognised by its id. A client could
 * then choose such an id for its own request; that record is scoped as a batch line of its own sub-account, which
 * hides nothing from the one who sent it.
 */
function legacyBatchOf(d: { requestId: string; clientRequestId?: string }): string | null {
  if (d.clientRequestId !== undefined) return null;
  return BATCH_LINE_ID.exec(d.requestId)?.[1] ?? null;
}
