import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import { nanosToCents } from '../../../billing/charge.ts';
import {
  type ChatDeps,
  clientError,
  completeChat,
  type OpenedStream,
  openChatStream,
  type Served,
} from '../../../chat/dispatch.ts';
import { tokensOnly } from '../../../chat/pricing.ts';
import { isValidTag, requestTag } from '../../../chat/request.ts';
import { settleChat } from '../../../chat/service.ts';
import { RequestRefused } from '../../../contracts/errors.ts';
import {
  type NativeStream,
  NativeUsage,
  nativeComplete,
  nativeStream,
  nativeText,
} from '../../../messages/native.ts';
import { toChatMessages, toChatRequest } from '../../../messages/request.ts';
import { messageIdFor, toMessageResponse } from '../../../messages/response.ts';
import { CountTokensRequest, MessagesRequest } from '../../../messages/schema.ts';
import { type MessageEvent, MessageEvents, sseEvent } from '../../../messages/stream.ts';
import { readOpenAiUsage } from '../../../providers/openai/usage.ts';
import { countChatInputTokensAsync, countTextTokensAsync } from '../../../tokens/count.ts';
import { describeAnthropicError } from '../../anthropic-errors.ts';
import { openEventStream } from '../../event-stream.ts';

/**
 * Anthropic's Messages API over the chat path: the request is translated to a chat completion, served, billed
 * and settled exactly as /chat/completions serves it, and the answer translated back.
 */
export const messagesRoutes =
  (deps: ChatDeps, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    // Also receives what the parent scope's hooks throw (a bad key, a rate limit) for these routes.
    app.setErrorHandler(async (error, request, reply) => {
      const described = describeAnthropicError(error, request.id);
      if (described.status >= 500 && described.status !== 503)
        request.log.error({ err: error }, 'request failed');
      reply.code(described.status).headers(described.headers).send(described.body);
    });

    app.post('/messages', { schema: { body: MessagesRequest } }, async (request, reply) => {
      const body = toChatRequest(request.body);
      const tag = costTag(request, live);
      // A client that goes away stops the upstream call too (and is billed for what was produced).
      const gone = new AbortController();
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) gone.abort();
      });
      reply.header('x-cache-status', 'miss').header('request-id', request.id);

      // An Anthropic model with no fallbacks is served in its own format, untranslated both ways.
      // With fallbacks (the request's or the configured ones) a request may be served elsewhere: translate it.
      const native =
        deps.catalog.get(request.body.model)?.api === 'anthropic' &&
        body.models === undefined &&
        !deps.fallbacks[request.body.model]?.length;
      if (native && body.stream) {
        const opened = await nativeStream(
          deps,
          request.auth,
          request.body,
          body,
          request.id,
          tag,
          gone.signal,
        );
        return relayNative(reply, opened, deps);
      }
      if (native) {
        const served = await nativeComplete(
          deps,
          request.auth,
          request.body,
          body,
          request.id,
          tag,
          gone.signal,
        );
        const cost = await settleChat(
          deps.spending,
          served.prepared,
          served.result.usage,
          nativeText(served.result.message),
        );
        reply
          .header('x-model', served.target.model.id)
          .header('x-provider', served.target.model.provider)
          .header('x-latency-ms', String(served.latencyMs))
          .header('x-cost-cents', String(nanosToCents(cost)));
        return { ...served.result.message, model: served.target.model.id };
      }

      if (body.stream) {
        const opened = await openChatStream(deps, request.auth, body, request.id, tag, gone.signal);
        return relayEvents(reply, opened, deps);
      }
      const served = await completeChat(deps, request.auth, body, request.id, tag, gone.signal);
      reply
        .header('x-model', served.target.model.id)
        .header('x-provider', served.target.model.provider)
        .header('x-latency-ms', String(served.latencyMs))
        .header('x-cost-cents', String(nanosToCents(served.costNanos)));
      const { completion, prepared } = served;
      // The same figures settleChat billed: the provider's usage, else the gateway's estimate.
      const usage =
        readOpenAiUsage(completion.usage) ??
        tokensOnly(prepared.inputTokens, await countTextTokensAsync(replyText(completion.choices[0])));
      return toMessageResponse(completion, {
        id: messageIdFor(completion.id),
        model: served.target.model.id,
        usage,
      });
    });

    // Counted as the gateway counts a request before reserving for it, so it predicts the hold, not the bill.
    app.post('/messages/count_tokens', { schema: { body: CountTokensRequest } }, async (request) => {
      const { model, system, messages } = request.body;
      if (!deps.catalog.get(model))
        throw new RequestRefused('model_not_found', `The model '${model}' does not exist`);
      return { input_tokens: await countChatInputTokensAsync(toChatMessages(system, messages)) };
    });
  };

function costTag(request: FastifyRequest, live: LiveAccounts): string | null {
  const header = request.headers['x-gw-tag'];
  if (!isValidTag(header)) throw new RequestRefused('invalid', "'x-gw-tag': 1 to 128 printable characters");
  const sub = request.auth.subAccountId ? live.subAccount(request.auth.subAccountId) : undefined;
  return requestTag(header, sub?.defaultTag ?? null);
}

function replyText(choice: unknown): string {
  const content = (choice as { message?: { content?: unknown } } | undefined)?.message?.content;
  return typeof content === 'string' ? content : '';
}

/**
 * The provider's chunks as Anthropic's events, written as they arrive. The stream is settled before its last
 * events, which carry the usage it was billed on; a failure mid-stream ends it with an `error` event, and a
 * client that goes away is billed for what was produced.
 */
async function relayEvents(reply: FastifyReply, opened: OpenedStream, deps: ChatDeps): Promise<void> {
  const { target, prepared } = opened;
  const stream = openEventStream(reply, opened);
  const write = (events: MessageEvent[]) => stream.write(events.map(sseEvent).join(''));
  const id = messageIdFor(opened.first.chunk.id);
  const translator = new MessageEvents({ id, model: target.model.id, inputTokens: prepared.inputTokens });
  let usage = opened.first.usage;
  let failure: unknown;
  try {
    await write([...translator.start(), ...translator.push(opened.first.chunk)]);
    for (let next = await opened.rest.next(); !next.done; next = await opened.rest.next()) {
      if (stream.gone()) break;
      usage = next.value.usage ?? usage;
      await write(translator.push(next.value.chunk));
    }
  } catch (error) {
    failure = clientError(error, target.model.id);
  } finally {
    if (stream.gone()) await opened.rest.return?.();
  }
  await settleChat(deps.spending, prepared, usage, translator.produced).catch((error: unknown) => {
    // The hold stays and expires; the audit reports the request as held but never settled.
    reply.log.error({ err: error, holdId: prepared.hold.holdId }, 'settling a streamed request failed');
    // An answer whose charge is not durable does not end as a success (the database was away for too long).
    failure ??= error;
  });
  if (stream.gone()) return;
  if (failure) {
    const { body } = describeAnthropicError(failure);
    stream.end(sseEvent({ type: 'error', error: body.error }));
    return;
  }
  const billed = usage ?? tokensOnly(prepared.inputTokens, await countTextTokensAsync(translator.produced));
  stream.end(translator.end(billed).map(sseEvent).join(''));
}

/**
 * An Anthropic model's own event stream, passed on event by event (the model id rewritten to the gateway's),
 * billed from the cumulative usage the events carry. `message_stop` is held back until the charge is durable,
 * so a stream whose settlement failed ends with an `error` event instead of as a success.
 */
async function relayNative(
  reply: FastifyReply,
  opened: Served & { result: NativeStream },
  deps: ChatDeps,
): Promise<void> {
  const { target, prepared } = opened;
  const stream = openEventStream(reply, opened);
  const usage = new NativeUsage();
  let stop: string | undefined;
  const write = async (event: { event: string | undefined; data: string }) => {
    usage.observe(event);
    if (event.event === 'message_stop') {
      stop = `event: message_stop\ndata: ${event.data}\n\n`;
      return;
    }
    let data = event.data;
    if (event.event === 'message_start') {
      const parsed = JSON.parse(data) as { message?: { model?: string } };
      if (parsed.message) parsed.message.model = target.model.id;
      data = JSON.stringify(parsed);
    }
    await stream.write(`${event.event ? `event: ${event.event}\n` : ''}data: ${data}\n\n`);
  };
  let failure: unknown;
  try {
    await write(opened.result.first);
    for (let next = await opened.result.rest.next(); !next.done; next = await opened.result.rest.next()) {
      if (stream.gone()) break;
      await write(next.value);
    }
  } catch (error) {
    failure = clientError(error, target.model.id);
  } finally {
    if (stream.gone()) await opened.result.rest.return?.();
  }
  await settleChat(deps.spending, prepared, usage.reported(), usage.produced).catch((error: unknown) => {
    reply.log.error({ err: error, holdId: prepared.hold.holdId }, 'settling a streamed request failed');
    failure ??= error;
  });
  if (stream.gone()) return;
  if (failure) {
    const { body } = describeAnthropicError(failure);
    stream.end(sseEvent({ type: 'error', error: body.error }));
    return;
  }
  stream.end(stop);
}
