import { z } from 'zod';
import { Nanos } from './money.ts';

/** A response-cache hit: which entry answered, how it matched, and what the discount saved the client. */
export const CacheHit = z.object({
  type: z.enum(['exact', 'semantic']),
  entryId: z.string(),
  /** The request whose answer was stored. */
  sourceRequestId: z.string(),
  similarity: z.number().nullable(),
  savedNanos: Nanos,
});

/** What the response cache did for a request beyond its status: the hit, and what its semantic lookup cost. */
export const CacheRecord = z.object({
  hit: CacheHit.nullable(),
  /** The gateway's own cost of embedding the prompt for a semantic lookup (never charged to the client). */
  embeddingCostNanos: Nanos.nullable(),
});
export type CacheRecord = z.infer<typeof CacheRecord>;

/**
 * One request that reached the pipeline, served or refused after authentication. It lives in the account's
 * budget stream so that a served request's record goes in the same append as its settlement (no flush of its
 * own). Bodies are not in the log: only their SHA-256, so the hash chain covers them while the bytes (in the
 * content-addressed store) can be deleted for retention or privacy.
 */
export const RequestCompleted = z.object({
  /** Made by the gateway, one per request: what the event's id derives from (a client may reuse X-Request-Id). */
  logId: z.string(),
  /**
   * The gateway's own id of the request (its `X-Gw-Request-Id`): made by the gateway for a client's request, or
   * derived by it from its own ids for its internal work (`<batch id>-<line>`, `<eval id>-<run>-<item>-<model>`).
   * Never a client's choice (records written before `clientRequestId` existed hold the client's `X-Request-Id`).
   */
  requestId: z.string(),
  /** The `X-Request-Id` the client sent, kept as its correlation id; absent when it sent none. */
  clientRequestId: z.string().optional(),
  /** The batch line this request ran, for a batch's lines; absent otherwise (and on records older than it). */
  batchLine: z.object({ batchId: z.string(), line: z.number().int().positive() }).optional(),
  accountId: z.string(),
  /** The budget stream's month it was appended to (`YYYY-MM`). */
  month: z.string(),
  subAccountId: z.string().nullable(),
  keyId: z.string(),
  /** The key's name when the request was made; absent on older records and on the gateway's own work. */
  keyName: z.string().optional(),
  /** The tag the request was sent under (a sub-account's own label, docs/billing.md), else its default tag. */
  tag: z.string().nullable(),
  /**
   * The tag whose budget it spent, when that is not `tag`: a sub-account spends under its default tag whatever tag
   * it sends. Set by the settlement; absent otherwise.
   */
  budgetTag: z.string().nullable().optional(),
  /** The route, e.g. `/v1/chat/completions`. */
  endpoint: z.string(),
  requestedModel: z.string().nullable(),
  /** The model and provider that served it (or, on a provider's failure, the last one tried); null when none was. */
  model: z.string().nullable(),
  provider: z.string().nullable(),
  status: z.number().int(),
  /** The error's `type` when the status is not 2xx. */
  errorType: z.string().nullable(),
  /** The error's message as the client got it, cut to 1,000 characters; absent when served and on older records. */
  errorMessage: z.string().optional(),
  stream: z.boolean(),
  usage: z.record(z.string(), z.unknown()).nullable(),
  costNanos: Nanos,
  holdId: z.string().nullable(),
  firstByteMs: z.number().int().nullable(),
  totalMs: z.number().int(),
  attempts: z.number().int(),
  fallbacks: z.number().int(),
  /** Filled by the response cache and the router when they exist. */
  cacheStatus: z.string().nullable(),
  /** Written since the response cache exists; absent on older records. */
  cache: CacheRecord.optional(),
  routing: z.unknown().nullable(),
  /** SHA-256 (hex) of the request as parsed, serialized as JSON; null when it was not JSON. */
  requestSha256: z.string().nullable(),
  /** SHA-256 (hex) of the response as JSON (a stream's assembled completion); null when there was none. */
  responseSha256: z.string().nullable(),
  /**
   * The provider credential that served it, by name (`byok:<name>` for the requester's own key); absent when none
   * did and on older records. The operator's: a follow-up keeps it (docs/providers.md), clients are not shown it.
   */
  credential: z.string().optional(),
  /** Whether the bodies were sent to the store (GATEWAY_REQUEST_BODIES=keep). */
  bodiesKept: z.boolean(),
  at: z.string(),
});

/** The record as the gateway makes it; the budget decider adds the month of the stream it lands in. */
export type RequestRecord = Omit<z.infer<typeof RequestCompleted>, 'month'>;
