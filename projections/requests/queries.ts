import type { Sql } from '../types.ts';

export interface RequestRow {
  log_id: string;
  request_id: string;
  client_request_id: string | null;
  batch_id: string | null;
  account_id: string;
  sub_account_id: string | null;
  key_id: string;
  /** Null on records older than key names, and on the gateway's own work (batch lines, evals). */
  key_name: string | null;
  tag: string | null;
  endpoint: string;
  requested_model: string | null;
  model: string | null;
  provider: string | null;
  status: number;
  error_type: string | null;
  error_message: string | null;
  stream: boolean;
  usage: Record<string, unknown> | null;
  cost_nanos: string;
  hold_id: string | null;
  first_byte_ms: number | null;
  total_ms: number;
  attempts: number;
  fallbacks: number;
  cache_status: string | null;
  cache: unknown;
  routing: unknown;
  request_sha256: string | null;
  response_sha256: string | null;
  bodies_kept: boolean;
  created_at: Date;
}

/**
 * Whose requests a reader may see: a sub-account key only the sub-account's; a main key the account's and its
 * sub-accounts', except the lines of a sub-account's batch, which are that sub-account's alone as the batch and its
 * files are (docs/requests.md).
 */
export interface RequestOwner {
  accountId: string;
  subAccountId: string | null;
}

/** The owner's rows, as SQL over `request_log`: `$1` the account, `$n` the sub-account (null for a main key). */
const readable = (sub: string) =>
  `account_id = $1 AND (CASE WHEN ${sub}::text IS NULL THEN batch_id IS NULL OR sub_account_id IS NULL
     ELSE sub_account_id = ${sub} END)`;

export interface RequestFilter {
  limit: number;
  /** A request id: the page starts after it (newest first). */
  after?: string;
  /** The client's own `X-Request-Id`. */
  clientRequestId?: string;
  model?: string;
  tag?: string;
  status?: number;
  subAccountId?: string;
  from?: Date;
  to?: Date;
}

/** The owner's newest record with this request id: the gateway's own id, never a client's. */
export async function findRequest(
  sql: Sql,
  owner: RequestOwner,
  requestId: string,
): Promise<RequestRow | undefined> {
  const { rows } = await sql.query<RequestRow & Record<string, unknown>>(
    `SELECT * FROM request_log WHERE ${readable('$3')} AND request_id = $2
     ORDER BY created_at DESC, log_id DESC LIMIT 1`,
    [owner.accountId, requestId, owner.subAccountId],
  );
  return rows[0];
}

/**
 * A reader's lookup by the id it holds: the request the gateway gave this id, else the owner's newest request the
 * client sent with this `X-Request-Id`. The gateway's id wins, so a client's id equal to one of the gateway's own
 * still names the gateway's request here; the client's is listed by `client_request_id`.
 */
export async function findRequestByEitherId(
  sql: Sql,
  owner: RequestOwner,
  id: string,
): Promise<RequestRow | undefined> {
  const own = await findRequest(sql, owner, id);
  if (own) return own;
  const { rows } = await sql.query<RequestRow & Record<string, unknown>>(
    `SELECT * FROM request_log WHERE ${readable('$3')} AND client_request_id = $2
     ORDER BY created_at DESC, log_id DESC LIMIT 1`,
    [owner.accountId, id, owner.subAccountId],
  );
  return rows[0];
}

/** The record with this log id (the request log's own id, unique per request), of any owner: check the owner. */
export async function findRequestByLogId(sql: Sql, logId: string): Promise<RequestRow | undefined> {
  const { rows } = await sql.query<RequestRow & Record<string, unknown>>(
    `SELECT * FROM request_log WHERE log_id = $1`,
    [logId],
  );
  return rows[0];
}

/** Whether a reader may see this record, by the rule of `RequestOwner` (the same as `readable`'s SQL). */
export const ownedBy = (
  row: Pick<RequestRow, 'account_id' | 'sub_account_id' | 'batch_id'>,
  owner: RequestOwner,
): boolean =>
  row.account_id === owner.accountId &&
  (owner.subAccountId === null
    ? row.batch_id === null || row.sub_account_id === null
    : row.sub_account_id === owner.subAccountId);

/** Whether a request other than `logId` refers to this body: a body two requests share is not erased with one. */
export async function bodyShared(sql: Sql, sha256: string, logId: string): Promise<boolean> {
  const { rows } = await sql.query(
    `SELECT 1 FROM request_log WHERE (request_sha256 = $1 OR response_sha256 = $1) AND log_id <> $2 LIMIT 1`,
    [sha256, logId],
  );
  return rows.length > 0;
}

/** A page of the owner's requests, newest first; one more than `limit` is read to tell whether more follow. */
export async function listRequests(
  sql: Sql,
  owner: RequestOwner,
  filter: RequestFilter,
): Promise<RequestRow[]> {
  const values: unknown[] = [owner.accountId, owner.subAccountId];
  const where = [readable('$2')];
  const add = (clause: string, value: unknown) => {
    values.push(value);
    where.push(clause.replaceAll('?', `$${values.length}`));
  };
  if (owner.subAccountId === null && filter.subAccountId !== undefined)
    add('sub_account_id = ?', filter.subAccountId);
  if (filter.clientRequestId !== undefined) add('client_request_id = ?', filter.clientRequestId);
  if (filter.model !== undefined) add('(model = ? OR requested_model = ?)', filter.model);
  if (filter.tag !== undefined) add('tag = ?', filter.tag);
  if (filter.status !== undefined) add('status = ?', filter.status);
  if (filter.from !== undefined) add('created_at >= ?', filter.from);
  if (filter.to !== undefined) add('created_at < ?', filter.to);
  if (filter.after !== undefined) {
    add(
      `(created_at, log_id) < (SELECT created_at, log_id FROM request_log
         WHERE account_id = $1 AND request_id = ? ORDER BY created_at DESC, log_id DESC LIMIT 1)`,
      filter.after,
    );
  }
  values.push(filter.limit + 1);
  const { rows } = await sql.query<RequestRow & Record<string, unknown>>(
    `SELECT * FROM request_log WHERE ${where.join(' AND ')}
     ORDER BY created_at DESC, log_id DESC LIMIT $${values.length}`,
    values,
  );
  return rows;
}

/** Every record of a month (`YYYY-MM`, UTC) for one account, or all accounts, oldest first: the export. */
export async function monthOfRequests(sql: Sql, month: string, accountId?: string): Promise<RequestRow[]> {
  const { rows } = await sql.query<RequestRow & Record<string, unknown>>(
    `SELECT * FROM request_log
     WHERE created_at >= ($1 || '-01T00:00:00Z')::timestamptz
       AND created_at < ($1 || '-01T00:00:00Z')::timestamptz + interval '1 month'
       AND ($2::text IS NULL OR account_id = $2)
     ORDER BY created_at, log_id`,
    [month, accountId ?? null],
  );
  return rows;
}

/**
 * Body hashes whose every reference is past its account's retention (`days` by account, else `defaultDays`) at
 * `now`: the retention worker's to delete. A body two requests share stays while either still keeps it. Only
 * bodies still in `request_bodies` count: hashes deleted before (by an earlier run, or erased) would otherwise
 * fill the limit run after run, and bodies expiring later would never be reached.
 */
export async function expiredBodies(
  sql: Sql,
  now: Date,
  defaultDays: number,
  days: Record<string, number>,
  limit: number,
  /** Bodies stored (or sent again) within this PostgreSQL interval before `now` are left alone. */
  grace: string,
): Promise<string[]> {
  const { rows } = await sql.query<{ sha: string }>(
    `SELECT sha FROM (
       SELECT request_sha256 AS sha, created_at, account_id FROM request_log
         WHERE request_sha256 IS NOT NULL AND bodies_kept
       UNION ALL
       SELECT response_sha256, created_at, account_id FROM request_log
         WHERE response_sha256 IS NOT NULL AND bodies_kept
     ) AS bodies
     -- By hash, so every reference of a hash still stored is kept in its group and counted.
     WHERE EXISTS (SELECT 1 FROM request_bodies
                   WHERE request_bodies.sha256 = bodies.sha AND request_bodies.stored_at < $1::timestamptz - $5::interval)
     GROUP BY sha
     HAVING max(created_at + make_interval(days => COALESCE(($3::jsonb ->> account_id)::int, $2))) < $1
     LIMIT $4`,
    [now, defaultDays, JSON.stringify(days), limit, grace],
  );
  return rows.map((r) => r.sha);
}

/**
 * The operator's lookup, of any sub-account (and of any account without one): the newest record the gateway gave
 * this id, else the newest a client sent with this `X-Request-Id`.
 */
export async function findRequestAnywhere(
  sql: Sql,
  id: string,
  accountId?: string,
): Promise<RequestRow | undefined> {
  for (const column of ['request_id', 'client_request_id']) {
    const { rows } = await sql.query<RequestRow & Record<string, unknown>>(
      `SELECT * FROM request_log WHERE ${column} = $1 AND ($2::text IS NULL OR account_id = $2)
       ORDER BY created_at DESC, log_id DESC LIMIT 1`,
      [id, accountId ?? null],
    );
    if (rows[0]) return rows[0];
  }
  return undefined;
}

/**
 * When each key last made a request the log holds (its latest record's arrival), by key id; keys with none are left
 * out. One index probe per key (`request_log (account_id, key_id, created_at)`).
 */
export async function lastUseOfKeys(
  sql: Sql,
  accountId: string,
  keyIds: string[],
): Promise<Map<string, Date>> {
  if (keyIds.length === 0) return new Map();
  const { rows } = await sql.query<{ key_id: string; last_used: Date | null }>(
    `SELECT k.key_id, (SELECT max(r.created_at) FROM request_log r WHERE r.account_id = $1 AND r.key_id = k.key_id)
       AS last_used
     FROM unnest($2::text[]) AS k(key_id)`,
    [accountId, keyIds],
  );
  return new Map(rows.flatMap((row) => (row.last_used ? [[row.key_id, row.last_used] as const] : [])));
}
