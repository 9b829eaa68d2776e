import { nanosToCents } from '../contracts/money.ts';
import type { LoggedRequest } from './lookup.ts';

/**
 * A logged request as `/v1/requests` answers it: cost in cents (and exact nano-dollars), timings, hashes. `nameOf`
 * names the key of a record that does not (older records, the gateway's own work) by its name now.
 */
export function requestView(logged: LoggedRequest, nameOf?: (keyId: string) => string | undefined) {
  return {
    object: 'request',
    id: logged.requestId,
    client_request_id: logged.clientRequestId,
    batch_id: logged.batchId,
    created_at: logged.createdAt.toISOString(),
    endpoint: logged.endpoint,
    requested_model: logged.requestedModel,
    model: logged.model,
    provider: logged.provider,
    status: logged.status,
    error_type: logged.errorType,
    error_message: logged.errorMessage,
    cache_hit: cacheHit(logged),
    stream: logged.stream,
    tag: logged.tag,
    sub_account_id: logged.subAccountId,
    key_id: logged.keyId,
    key_name: logged.keyName ?? nameOf?.(logged.keyId) ?? null,
    usage: logged.usage,
    cost_cents: nanosToCents(logged.costNanos),
    cost_nanos: logged.costNanos.toString(),
    hold_id: logged.holdId,
    latency_first_byte_ms: logged.firstByteMs,
    latency_ms: logged.totalMs,
    attempts: logged.attempts,
    fallbacks: logged.fallbacks,
    cache_status: logged.cacheStatus,
    cache: cacheView(logged.cache),
    routing: logged.routing,
    request_sha256: logged.requestSha256,
    response_sha256: logged.responseSha256,
    bodies_kept: logged.bodiesKept,
  };
}

/** Whether the response cache answered it: a hit's record, or on records older than it, its X-Cache-Status. */
export function cacheHit(logged: Pick<LoggedRequest, 'cache' | 'cacheStatus'>): boolean {
  const record = logged.cache as { hit: unknown } | null;
  if (record) return record.hit !== null;
  return logged.cacheStatus?.startsWith('hit') ?? false;
}

/** The cache's part as the API spells it: snake case, money in cents and exact nano-dollars. */
function cacheView(cache: unknown) {
  const record = cache as {
    hit: {
      type: string;
      entryId: string;
      sourceRequestId: string;
      similarity: number | null;
      savedNanos: string;
    } | null;
    embeddingCostNanos: string | null;
  } | null;
  if (!record) return null;
  const hit = record.hit;
  return {
    hit: hit
      ? {
          type: hit.type,
          entry_id: hit.entryId,
          source_request_id: hit.sourceRequestId,
          similarity: hit.similarity,
          saved_cents: nanosToCents(BigInt(hit.savedNanos)),
          saved_nanos: hit.savedNanos,
        }
      : null,
    embedding_cost_nanos: record.embeddingCostNanos,
  };
}
