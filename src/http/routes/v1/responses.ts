import { randomBytes } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Sql } from '../../../../projections/types.ts';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import { type ChatDeps, type ChatItem, completeChat, streamChat } from '../../../chat/complete.ts';
import { tokensOnly } from '../../../chat/pricing.ts';
import { RequestRefused } from '../../../contracts/errors.ts';
import { nanosToCents } from '../../../contracts/money.ts';
import type { BlobStore } from '../../../files/blob-store.ts';
import { notCached } from '../../../pipeline/cached.ts';
import {
  checkTextCompletion,
  completeText,
  streamText,
  type TextItem,
} from '../../../responses/completions.ts';
import { inResponsesTerms, toChatRequest } from '../../../responses/request.ts';
import { finishedResponse, turnOf } from '../../../responses/response.ts';
import { CompletionsRequest, ResponsesRequest } from '../../../responses/schema.ts';
import {
  conversationBefore,
  credentialOf,
  deleteStored,
  listedInputItems,
  RecentResponses,
  type ResponseStore,
  readStored,
  responseIdOf,
} from '../../../responses/stored.ts';
import { ResponseEvents, sseEvent } from '../../../responses/stream.ts';
import { describeError } from '../../errors.ts';
import { queryInteger } from '../../query.ts';
import { callContext, relaySse, type SseEncoder, servedHeaders } from '../../served.ts';

const Id = z.object({ id: z.string().min(1) });

const ItemsQuery = z.object({
  limit: queryInteger(1, 100).default(20),
  order: z.enum(['asc', 'desc']).default('desc'),
  after: z.string().min(1).optional(),
  include: z.union([z.string(), z.array(z.string())]).optional(),
});

const RetrieveQuery = z.object({
  stream: z.enum(['true', 'false']).optional(),
  include: z.union([z.string(), z.array(z.string())]).optional(),
  include_obfuscation: z.string().optional(),
  starting_after: z.string().optional(),
});

/**
 * OpenAI's Responses API over the chat path: a request is translated to a chat completion, served, billed and
 * settled exactly as /chat/completions serves it, and the answer translated back. A response is kept in the
 * request log: its id is the log's id, and reading it back, listing its input or continuing from it reads the
 * logged bodies, within the caller's account (a sub-account key: its sub-account).
 */
export const responsesRoutes =
  (
    deps: ChatDeps,
    live: LiveAccounts,
    sql: Sql,
    blobs: BlobStore,
    forget: (sha256s: readonly string[]) => void,
  ): FastifyPluginAsyncZod =>
  async (app) => {
    const store: ResponseStore = { sql, blobs, forget, recent: new RecentResponses() };

    app.post('/responses', { schema: { body: ResponsesRequest } }, async (request, reply) => {
      const body = request.body;
      const owner = { accountId: request.auth.accountId, subAccountId: request.auth.subAccountId };
      const earlier = body.previous_response_id
        ? await conversationBefore(store, owner, body.previous_response_id)
        : [];
      const chat = toChatRequest(body, earlier);
      const context = callContext(request, reply, live);
      // A follow-up keeps the credential its conversation was served on, when the pool still has it usable.
      const credential = body.previous_response_id
        ? await credentialOf(store, body.previous_response_id)
        : undefined;
      if (credential !== undefined) context.preferCredential = credential;
      notCached(context, (headers) => {
        reply.headers(headers);
      });
      const log = request.requestLog;
      const id = log ? responseIdOf(log.logId) : `resp_${randomBytes(16).toString('hex')}`;
      if (log) store.recent.add(log.logId, owner);
      const createdAt = Math.floor((log ? Date.parse(log.at) : Date.now()) / 1000);
      if (chat.stream) {
        const stream = await streamChat(deps, context, chat).catch(rethrowInResponsesTerms);
        const meta = { id, createdAt, model: stream.model.id };
        return relaySse(reply, stream, responseEvents(body, meta, stream.reserved.inputTokens));
      }
      const served = await completeChat(deps, context, chat).catch(rethrowInResponsesTerms);
      servedHeaders(reply, served);
      return finishedResponse(body, turnOf(served.completion), {
        id,
        createdAt,
        model: served.model.id,
        // The figures the charge was made on: the provider's usage, else the gateway's estimate.
        usage: served.usage,
      });
    });

    app.get('/responses/:id', { schema: { params: Id, querystring: RetrieveQuery } }, async (request) => {
      if (request.query.stream === 'true') {
        throw new RequestRefused(
          'invalid',
          "'stream': a stored response is read whole; streaming it back is not supported",
        );
      }
      const owner = { accountId: request.auth.accountId, subAccountId: request.auth.subAccountId };
      return (await readStored(store, owner, request.params.id)).response;
    });

    app.get(
      '/responses/:id/input_items',
      { schema: { params: Id, querystring: ItemsQuery } },
      async (request) => {
        const owner = { accountId: request.auth.accountId, subAccountId: request.auth.subAccountId };
        const stored = await readStored(store, owner, request.params.id);
        const { limit, order, after } = request.query;
        const items = listedInputItems(stored);
        const ordered = order === 'desc' ? items.reverse() : items;
        let start = 0;
        if (after !== undefined) {
          const at = ordered.findIndex((item) => item.id === after);
          if (at < 0)
            throw new RequestRefused('invalid', `'after': no input item '${after}' in this response`);
          start = at + 1;
        }
        const data = ordered.slice(start, start + limit);
        return {
          object: 'list',
          data,
          first_id: data[0]?.id ?? null,
          last_id: data.at(-1)?.id ?? null,
          has_more: start + limit < ordered.length,
        };
      },
    );

    app.delete('/responses/:id', { schema: { params: Id } }, async (request) => {
      const owner = { accountId: request.auth.accountId, subAccountId: request.auth.subAccountId };
      await deleteStored(store, owner, request.params.id);
      return { id: request.params.id, object: 'response', deleted: true };
    });

    // The legacy format continues a raw prompt: served natively by the instruct-era models that have it, and
    // refused for the others with the way to ask them in the chat format.
    app.post('/completions', { schema: { body: CompletionsRequest } }, async (request, reply) => {
      const body = request.body;
      const model = checkTextCompletion(deps, body);
      const context = callContext(request, reply, live);
      notCached(context, (headers) => {
        reply.headers(headers);
      });
      if (body.stream) {
        const stream = await streamText(deps, context, body, model);
        return relaySse(
          reply,
          stream,
          textChunks(stream.model.id, body.stream_options?.include_usage === true),
        );
      }
      const served = await completeText(deps, context, body, model);
      servedHeaders(reply, served);
      return served.completion;
    });
  };

const data = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`;

/**
 * The provider's legacy chunks as they arrive, under the gateway's model id, framed as OpenAI frames them; the
 * usage chunk only when the client asked for it, with the charge as `usage.cost_cents` (as on
 * /chat/completions), then `[DONE]`.
 */
function textChunks(model: string, includeUsage: boolean): SseEncoder<TextItem> {
  let usageChunk: Record<string, unknown> | undefined;
  return {
    item(item) {
      const chunk: Record<string, unknown> & { choices: unknown[] } = { ...item.text, model };
      if (item.usage) {
        usageChunk = chunk;
        if (chunk.choices.length === 0) return '';
        delete chunk.usage;
      }
      return data(chunk);
    },
    end(outcome) {
      const usage =
        includeUsage && usageChunk
          ? data({
              ...usageChunk,
              choices: [],
              usage: { ...(usageChunk.usage as object), cost_cents: nanosToCents(outcome.costNanos) },
            })
          : '';
      return `${usage}data: [DONE]\n\n`;
    },
    fail: (failure) => `${data(describeError(failure).body)}data: [DONE]\n\n`,
  };
}

const rethrowInResponsesTerms = (error: unknown): never => {
  throw inResponsesTerms(error);
};

/**
 * The chunks as the Responses API's events, written as they arrive. The last event carries the whole response
 * with the usage the stream was billed on, so it is written once the pipeline has settled it; a failure
 * mid-stream ends it with an `error` event.
 */
function responseEvents(
  body: ResponsesRequest,
  meta: { id: string; createdAt: number; model: string },
  inputTokens: number,
): SseEncoder<ChatItem> {
  const events = new ResponseEvents(body, meta);
  let started = false;
  return {
    item(item) {
      const out = started ? events.push(item.chunk) : [...events.start(), ...events.push(item.chunk)];
      started = true;
      return out.map(sseEvent).join('');
    },
    end: (outcome) =>
      events
        .end(outcome.usage ?? tokensOnly(inputTokens, 0))
        .map(sseEvent)
        .join(''),
    fail(failure) {
      const { error } = describeError(failure).body;
      return sseEvent(events.error(error));
    },
  };
}
