import type { GatewayEvent } from '../../events/index.ts';
import { slices, valuesList } from '../rows.ts';
import type { Folded, Projection, Sql } from '../types.ts';

/**
 * The request log: one row per `RequestCompleted`, the listing behind `GET /v1/requests`. Bodies are not here;
 * their hashes are, and the bytes live in the blob store under them.
 */
export const requestsProjection: Projection = {
  name: 'requests',
  // 3: client_request_id and batch_id (a reader's lookup by its own id; a batch line's record scoped as its batch).
  // 4: key_name and error_message (who asked, why it was refused), and the index of a key's last use.
  // 5: credential (the pool credential that served, for a follow-up to keep; never shown to a client).
  version: 5,
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
      credential text,
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
  evolve: (sql, t, event, stored) => insertRecords(sql, t, [{ event, stored }]),
  evolveRun: insertRecords,
};

const COLUMNS = [
  ['log_id', 'text'],
  ['request_id', 'text'],
  ['account_id', 'text'],
  ['sub_account_id', 'text'],
  ['key_id', 'text'],
  ['tag', 'text'],
  ['endpoint', 'text'],
  ['requested_model', 'text'],
  ['model', 'text'],
  ['provider', 'text'],
  ['status', 'integer'],
  ['error_type', 'text'],
  ['stream', 'boolean'],
  ['usage', 'jsonb'],
  ['cost_nanos', 'numeric'],
  ['hold_id', 'text'],
  ['first_byte_ms', 'integer'],
  ['total_ms', 'integer'],
  ['attempts', 'integer'],
  ['fallbacks', 'integer'],
  ['cache_status', 'text'],
  ['routing', 'jsonb'],
  ['request_sha256', 'text'],
  ['response_sha256', 'text'],
  ['bodies_kept', 'boolean'],
  ['created_at', 'timestamptz'],
  ['cache', 'jsonb'],
  ['client_request_id', 'text'],
  ['batch_id', 'text'],
  ['key_name', 'text'],
  ['error_message', 'text'],
  ['credential', 'text'],
] as const;

/** A run's records in one multi-row INSERT; a record already there (a replay) is kept as it is. */
async function insertRecords(sql: Sql, t: Record<string, string>, items: readonly Folded[]): Promise<void> {
  const records = items.flatMap(({ event }) => (event.type === 'RequestCompleted' ? [event.data] : []));
  for (const slice of slices(records)) {
    const { text, values } = valuesList(
      slice.map(recordRow),
      COLUMNS.map(([, type]) => type),
    );
    await sql.query(
      `INSERT INTO ${t.request_log} (${COLUMNS.map(([name]) => name).join(', ')}) VALUES ${text}
       ON CONFLICT (log_id) DO NOTHING`,
      values,
    );
  }
}

type RequestRecord = Extract<GatewayEvent, { type: 'RequestCompleted' }>['data'];

function recordRow(d: RequestRecord): unknown[] {
  return [
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
    d.credential ?? null,
  ];
}

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
