import {
  bodyShared,
  findRequestByLogId,
  ownedBy,
  type RequestOwner,
} from '../../projections/requests/queries.ts';
import type { Sql } from '../../projections/types.ts';
import { removeBodies } from '../billing/request-bodies.ts';
import type { ReportedUsage } from '../contracts/chat.ts';
import { invalidField, RequestRefused } from '../contracts/errors.ts';
import type { BlobStore } from '../files/blob-store.ts';
import { type LoggedRequest, loggedBody, loggedRequest } from '../requests/lookup.ts';
import { inputItems } from './request.ts';
import { finishedResponse, type OutputItem, outputId, turnOf } from './response.ts';
import { type InputItem, ResponsesRequest } from './schema.ts';

export const RESPONSES_ENDPOINT = '/v1/responses';

/** A response's id is the request log's id of the request that made it, so the log is where it is kept. */
export const responseIdOf = (logId: string) => `resp_${logId.replace(/^rlog_/, '')}`;

export function logIdOf(responseId: string): string | undefined {
  const hex = /^resp_([0-9a-f]{32})$/.exec(responseId)?.[1];
  return hex === undefined ? undefined : `rlog_${hex}`;
}

/** A response read back from the request log: the request as it was sent, the response as it was served. */
export interface StoredResponse {
  logged: LoggedRequest;
  request: ResponsesRequest;
  response: Record<string, unknown> & { output: OutputItem[] };
}

export interface ResponseStore {
  sql: Sql;
  blobs: BlobStore;
  /** Told the bodies a deletion erased (`RequestBodies.forget`), so a request repeating one stores it again. */
  forget?: (sha256s: readonly string[]) => void;
  /** Responses this instance has just served, whose records may not be in the read model yet. */
  recent: RecentResponses;
  /** How long to wait for a response just served to reach the read model. */
  settleMs?: number;
}

/**
 * The ids this instance served lately, with their owners. A record reaches the read model a few milliseconds after
 * its answer, and a client that continues the conversation at once may be faster: such an id is waited for, while
 * an id nobody served here is answered at once (a 404 takes no longer for an unknown id than for another's).
 */
export class RecentResponses {
  private readonly served = new Map<string, { owner: RequestOwner; until: number }>();

  constructor(
    private readonly ttlMs = 60_000,
    private readonly max = 10_000,
  ) {}

  add(logId: string, owner: RequestOwner): void {
    this.served.set(logId, { owner, until: Date.now() + this.ttlMs });
    if (this.served.size > this.max) {
      const oldest = this.served.keys().next().value;
      if (oldest !== undefined) this.served.delete(oldest);
    }
  }

  /** Whether this owner was served this id lately, so its record is worth waiting for. */
  pending(logId: string, owner: RequestOwner): boolean {
    const entry = this.served.get(logId);
    if (!entry) return false;
    if (entry.until < Date.now()) {
      this.served.delete(logId);
      return false;
    }
    return (
      entry.owner.accountId === owner.accountId &&
      (owner.subAccountId === null || entry.owner.subAccountId === owner.subAccountId)
    );
  }
}

/** Where a deleted response's mark is kept: beside the bodies, in the blob store every instance shares. */
const deletedKey = (logId: string) => `responses/deleted/${logId}.json`;

const isDeleted = async (store: ResponseStore, logId: string) =>
  (await store.blobs.size(deletedKey(logId))) !== undefined;

/** How long a response just served may take to reach the read model and its bodies the store, under load. */
const SETTLE_MS = 5000;

const sleep = () => new Promise((resolve) => setTimeout(resolve, 25));

const notFound = (id: string, why = '') => new RequestRefused('not_found', `No response '${id}'${why}`);

/**
 * The owner's record of a served response; another owner's is not found, as an unknown one. An id this instance
 * has just served is waited for until the read model has it.
 */
async function findServed(store: ResponseStore, owner: RequestOwner, id: string): Promise<LoggedRequest> {
  const logId = logIdOf(id);
  if (logId === undefined) throw notFound(id);
  const deadline = Date.now() + (store.settleMs ?? SETTLE_MS);
  for (;;) {
    const row = await findRequestByLogId(store.sql, logId);
    if (row && !ownedBy(row, owner)) throw notFound(id);
    if (row) {
      const logged = loggedRequest(row);
      if (logged.endpoint !== RESPONSES_ENDPOINT || logged.status >= 400) throw notFound(id);
      if (await isDeleted(store, logId)) throw notFound(id, ': it was deleted');
      return logged;
    }
    if (!store.recent.pending(logId, owner) || Date.now() >= deadline) throw notFound(id);
    await sleep();
  }
}

/**
 * A response with its bodies, or a refusal saying why it cannot be read: another owner's or an unknown id (404),
 * a request made with `store: false`, bodies the account does not keep, or bodies already deleted by retention.
 */
export async function readStored(
  store: ResponseStore,
  owner: RequestOwner,
  id: string,
  refuse: (why: string) => RequestRefused = (why) => notFound(id, `: ${why}`),
): Promise<StoredResponse> {
  const logged = await findServed(store, owner, id);
  if (!logged.bodiesKept) {
    throw refuse(
      "this account's request bodies are not kept (request_bodies: drop), so its responses are not stored",
    );
  }
  // Bodies are written in the background, a moment after the record: a young record's are waited for.
  const deadline = logged.createdAt.getTime() + (store.settleMs ?? SETTLE_MS);
  let requestBody: unknown;
  let responseBody: unknown;
  for (;;) {
    requestBody ??= await loggedBody(store, logged.requestSha256);
    responseBody ??= await loggedBody(store, logged.responseSha256);
    if ((requestBody !== undefined && responseBody !== undefined) || Date.now() >= deadline) break;
    await sleep();
  }
  if (requestBody === undefined || responseBody === undefined) {
    throw refuse('its bodies are no longer in the request log (past the retention period, or erased)');
  }
  const parsed = ResponsesRequest.safeParse(requestBody);
  if (!parsed.success) throw refuse('its logged request is not a Responses request');
  const request = parsed.data;
  if (request.store === false) throw refuse('it was created with store: false');
  const response = finishedResponse(request, turnOf(responseBody), {
    id,
    createdAt: Math.floor(logged.createdAt.getTime() / 1000),
    model: logged.model ?? request.model ?? '',
    usage: reportedUsage(logged.usage),
  }) as StoredResponse['response'];
  return { logged, request, response };
}

function reportedUsage(usage: Record<string, unknown> | null): ReportedUsage | null {
  if (!usage) return null;
  const n = (key: string) => (typeof usage[key] === 'number' ? (usage[key] as number) : 0);
  return {
    promptTokens: n('promptTokens'),
    completionTokens: n('completionTokens'),
    cachedPromptTokens: n('cachedPromptTokens'),
    cacheWriteTokens: n('cacheWriteTokens'),
    reasoningTokens: n('reasoningTokens'),
  };
}

/** Conversations longer than this are refused rather than read hop by hop. */
const MAX_HOPS = 200;

/**
 * The conversation before a request that names `previous_response_id`: each earlier response's input and output,
 * oldest first (instructions are not carried over, as OpenAI does not). Refusals are 400s naming the field.
 */
export async function conversationBefore(
  store: ResponseStore,
  owner: RequestOwner,
  previousId: string,
): Promise<InputItem[]> {
  const turns: InputItem[][] = [];
  let id: string | null | undefined = previousId;
  while (id) {
    if (turns.length >= MAX_HOPS) {
      throw invalidField('previous_response_id', `the conversation is longer than ${MAX_HOPS} responses`);
    }
    const at = id;
    let stored: StoredResponse;
    try {
      stored = await readStored(store, owner, at, (why) =>
        invalidField('previous_response_id', `response '${at}' cannot be continued: ${why}`),
      );
    } catch (error) {
      if (error instanceof RequestRefused && error.kind === 'not_found') {
        throw new RequestRefused('not_found', `'previous_response_id': no response '${at}'`);
      }
      throw error;
    }
    turns.push([...inputItems(stored.request.input), ...(stored.response.output as InputItem[])]);
    id = stored.request.previous_response_id;
  }
  return turns.reverse().flat();
}

/** A response's own input items as the API lists them, each with an id (its own, or one derived from the response's). */
export function listedInputItems(stored: StoredResponse): Record<string, unknown>[] {
  const id = stored.response.id as string;
  return inputItems(stored.request.input).map((item, i) => {
    const own = typeof (item as { id?: unknown }).id === 'string' ? (item as { id: string }).id : undefined;
    const type = item.type ?? 'message';
    if (type === 'message' && 'role' in item) {
      const content =
        typeof item.content === 'string' ? [{ type: 'input_text', text: item.content }] : item.content;
      return { ...item, id: own ?? outputId(id, 'msg_in', i), type: 'message', content, status: 'completed' };
    }
    const prefix =
      type === 'function_call' ? 'fc_in' : type === 'function_call_output' ? 'fco_in' : 'item_in';
    return { ...item, id: own ?? outputId(id, prefix, i), status: 'completed' };
  });
}

/**
 * Deletes a response: from now on it reads as not found (also as a `previous_response_id`), and its bodies are
 * erased from the request log's store unless another request shares them (an identical prompt), in which case
 * retention removes them later. The log's event and the bodies' hashes stay, as they do after retention, so the
 * audit still passes.
 */
export async function deleteStored(store: ResponseStore, owner: RequestOwner, id: string): Promise<void> {
  const logged = await findServed(store, owner, id);
  const mark = JSON.stringify({ response_id: id, deleted_at: new Date().toISOString() });
  await store.blobs.write(deletedKey(logged.logId), Buffer.from(mark));
  for (const sha of new Set([logged.requestSha256, logged.responseSha256])) {
    if (sha === null || (await bodyShared(store.sql, sha, logged.logId))) continue;
    await removeBodies(store, [sha]);
  }
}

/**
 * The pool credential the response was served on (its record names it), for a follow-up to keep: the provider's
 * prompt cache belongs to that key. Undefined when it was served on none (a local model; an own key, `byok:…`, is
 * used first anyway) or on records older than the field.
 */
export async function credentialOf(store: ResponseStore, responseId: string): Promise<string | undefined> {
  const logId = logIdOf(responseId);
  if (logId === undefined) return undefined;
  const { rows } = await store.sql.query<{ credential: string | null }>(
    'SELECT credential FROM request_log WHERE log_id = $1',
    [logId],
  );
  const credential = rows[0]?.credential ?? undefined;
  return credential?.startsWith('byok:') ? undefined : credential;
}
