import { createHash } from 'node:crypto';
import {
  findRequest,
  findRequestByEitherId,
  type RequestOwner,
  type RequestRow,
} from '../../projections/requests/queries.ts';
import type { Sql } from '../../projections/types.ts';
import { type BodySource, readBodyJson } from '../billing/request-bodies.ts';

/** One request of the log, as the read model holds it (bodies are fetched apart, by hash). */
export interface LoggedRequest {
  logId: string;
  /** The gateway's own id of the request. */
  requestId: string;
  /** The client's `X-Request-Id`, when it sent one. */
  clientRequestId: string | null;
  /** The batch whose line this request ran, when it is one. */
  batchId: string | null;
  accountId: string;
  subAccountId: string | null;
  keyId: string;
  /** The key's name when the request was made; null on older records and the gateway's own work. */
  keyName: string | null;
  tag: string | null;
  endpoint: string;
  requestedModel: string | null;
  model: string | null;
  provider: string | null;
  status: number;
  errorType: string | null;
  /** The error's message as the client got it (bounded); null when served, and on older records. */
  errorMessage: string | null;
  stream: boolean;
  usage: Record<string, unknown> | null;
  costNanos: bigint;
  holdId: string | null;
  firstByteMs: number | null;
  totalMs: number;
  attempts: number;
  fallbacks: number;
  cacheStatus: string | null;
  /** The hit (type, entry, saving) and the semantic lookup's cost, when the cache had a part in it. */
  cache: unknown;
  routing: unknown;
  requestSha256: string | null;
  responseSha256: string | null;
  bodiesKept: boolean;
  createdAt: Date;
}

export function loggedRequest(row: RequestRow): LoggedRequest {
  return {
    logId: row.log_id,
    requestId: row.request_id,
    clientRequestId: row.client_request_id,
    batchId: row.batch_id,
    accountId: row.account_id,
    subAccountId: row.sub_account_id,
    keyId: row.key_id,
    keyName: row.key_name,
    tag: row.tag,
    endpoint: row.endpoint,
    requestedModel: row.requested_model,
    model: row.model,
    provider: row.provider,
    status: row.status,
    errorType: row.error_type,
    errorMessage: row.error_message,
    stream: row.stream,
    usage: row.usage,
    costNanos: BigInt(row.cost_nanos),
    holdId: row.hold_id,
    firstByteMs: row.first_byte_ms,
    totalMs: row.total_ms,
    attempts: row.attempts,
    fallbacks: row.fallbacks,
    cacheStatus: row.cache_status,
    cache: row.cache ?? null,
    routing: row.routing ?? null,
    requestSha256: row.request_sha256,
    responseSha256: row.response_sha256,
    bodiesKept: row.bodies_kept,
    createdAt: row.created_at,
  };
}

/** The owner's request the gateway gave this id: how the gateway finds its own requests, never by a client's id. */
export async function findLoggedRequest(
  sql: Sql,
  accountId: string,
  requestId: string,
  subAccountId: string | null = null,
): Promise<LoggedRequest | undefined> {
  const owner: RequestOwner = { accountId, subAccountId };
  const row = await findRequest(sql, owner, requestId);
  return row && loggedRequest(row);
}

/**
 * A reader's request by the id it holds: the gateway's id (`X-Gw-Request-Id`), else its own `X-Request-Id` (the
 * newest request it sent with it). For what a client asks for, never for the gateway's own work.
 */
export async function findRequestForReader(
  sql: Sql,
  owner: RequestOwner,
  id: string,
): Promise<LoggedRequest | undefined> {
  const row = await findRequestByEitherId(sql, owner, id);
  return row && loggedRequest(row);
}

/**
 * A stored body, checked against the hash the log holds: undefined when it was never kept, has been deleted
 * (retention) or does not match (a body the log cannot vouch for is not served).
 */
export async function loggedBody(source: BodySource, sha256: string | null): Promise<unknown> {
  if (sha256 === null) return undefined;
  const json = await readBodyJson(source, sha256);
  if (json === undefined || createHash('sha256').update(json).digest('hex') !== sha256) return undefined;
  return JSON.parse(json);
}

/** Both bodies of a logged request, or undefined when they were dropped or deleted. */
export async function loggedBodies(
  source: BodySource,
  logged: Pick<LoggedRequest, 'bodiesKept' | 'requestSha256' | 'responseSha256'>,
): Promise<{ request: unknown; response: unknown } | undefined> {
  if (!logged.bodiesKept) return undefined;
  const request = await loggedBody(source, logged.requestSha256);
  const response = await loggedBody(source, logged.responseSha256);
  if (request === undefined && response === undefined) return undefined;
  return { request: request ?? null, response: response ?? null };
}
