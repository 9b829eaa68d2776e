import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import { permitModel } from '../../../accounts/model-access.ts';
import { modeOf } from '../../../cache/mode.ts';
import { chatCache, StreamRecorder, storableChoices } from '../../../chat/cached.ts';
import { type ChatDeps, type ChatItem, completeChat, streamChat } from '../../../chat/complete.ts';
import { chatModels, findChatModel } from '../../../chat/models.ts';
import { tokensOnly } from '../../../chat/pricing.ts';
import { hitItems, hitUsage } from '../../../chat/replayed.ts';
import { RequestRefused } from '../../../contracts/errors.ts';
import type { SseEvent } from '../../../contracts/messages.ts';
import { hitMessage, NativeRecorder, nativeChoices } from '../../../messages/cached.ts';
import { nativeComplete, nativeStream } from '../../../messages/native.ts';
import { toChatMessages, toChatRequest } from '../../../messages/request.ts';
import { messageIdFor, toMessageResponse } from '../../../messages/response.ts';
import { CountTokensRequest, MessagesRequest } from '../../../messages/schema.ts';
import { MessageEvents, sseEvent } from '../../../messages/stream.ts';
import { cachedCall } from '../../../pipeline/cached.ts';
import { countChatInputTokensAsync } from '../../../tokens/count.ts';
import { describeAnthropicError } from '../../anthropic-errors.ts';
import { relayRecorded, replaySse } from '../../cached.ts';
import { callContext, relaySse, type SseEncoder } from '../../served.ts';

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
      return reply.code(described.status).headers(described.headers).send(described.body);
    });

    app.post('/messages', { schema: { body: MessagesRequest } }, async (request, reply) => {
      // A provider-less id (`claude-sonnet-4-5`) is resolved first, so an Anthropic model is still served natively.
      const named = findChatModel(deps.catalog, deps.env, request.body.model);
      if (named) request.body.model = named.id;
      const body = toChatRequest(request.body);
      const context = callContext(request, reply, live);
      reply.header('request-id', request.id);
      // Resolved once: the cache step and the served call (translated or native) read the same models.
      const models = chatModels(deps, context, body);
      const cache = chatCache(
        deps,
        context,
        { ...body, cache: modeOf(request.body.cache) },
        models,
        request.headers['x-gw-cache-threshold'],
        { kind: 'messages', body: request.body },
      );
      const headers = (values: Record<string, string>) => {
        reply.headers(values);
      };
      // An Anthropic model with no fallbacks is served in its own format, untranslated both ways.
      // With fallbacks (the request's or the configured ones) a request may be served elsewhere: translate it.
      const native =
        deps.catalog.get(request.body.model)?.api === 'anthropic' &&
        body.models === undefined &&
        !deps.fallbacks[request.body.model]?.length;

      if (!body.stream) {
        const call = await cachedCall(
          deps,
          context,
          {
            ...cache,
            answer: hitMessage,
            async serve() {
              if (native) {
                const served = await nativeComplete(deps, context, request.body, body, models);
                const message = { ...served.message, model: served.model.id };
                return { outcome: served, message, choices: nativeChoices(served.message) };
              }
              const served = await completeChat(deps, context, body, 'none', models);
              const { completion } = served;
              const message = toMessageResponse(completion, {
                id: messageIdFor(completion.id),
                model: served.model.id,
                // The figures the charge was made on: the provider's usage, else the gateway's estimate.
                usage: served.usage,
              });
              return { outcome: served, message, choices: storableChoices(completion.choices as never[]) };
            },
            kept: (served) => ({ outcome: served.outcome, answer: served.choices }),
          },
          headers,
        );
        return call.hit ? call.answer : call.served.message;
      }

      const call = await cachedCall(
        deps,
        context,
        {
          ...cache,
          answer: (found) => ({ items: hitItems(found), inputTokens: hitUsage(found).promptTokens }),
          recorded: hitMessage,
          async serve(keeps) {
            // An answer that will not be stored is relayed without being put back together as it passes.
            if (native) {
              const stream = await nativeStream(deps, context, request.body, body, models);
              const encoder = nativeEvents(stream.model.id);
              if (!keeps) return () => relaySse(reply, stream, encoder);
              return relayRecorded(reply, stream, encoder, new NativeRecorder());
            }
            const stream = await streamChat(deps, context, body, models);
            const encoder = messageEvents(stream.model.id, stream.reserved.inputTokens);
            if (!keeps) return () => relaySse(reply, stream, encoder);
            return relayRecorded(reply, stream, encoder, new StreamRecorder());
          },
        },
        headers,
      );
      if (!call.hit) return call.served(call.keep);
      const { items, inputTokens } = call.answer;
      return replaySse(reply, call.outcome, items, messageEvents(call.outcome.model.id, inputTokens));
    });

    // Counted as the gateway counts a request before reserving for it, so it predicts the hold, not the bill.
    app.post('/messages/count_tokens', { schema: { body: CountTokensRequest } }, async (request) => {
      const { model, system, messages } = request.body;
      const found = findChatModel(deps.catalog, deps.env, model);
      if (!found) throw new RequestRefused('model_not_found', `The model '${model}' does not exist`);
      permitModel(deps.spending.allowedModels(request.auth), found.id, { named: model });
      return { input_tokens: await countChatInputTokensAsync(toChatMessages(system, messages)) };
    });
  };

/** A failure as Anthropic's `error` event, which ends the stream. */
const errorEvent = (failure: unknown) => {
  const { body } = describeAnthropicError(failure);
  return sseEvent({ type: 'error', error: body.error });
};

/**
 * The provider's chunks as Anthropic's events, written as they arrive. The last events carry the usage the
 * stream was billed on, so they are written once the pipeline has settled it; a failure mid-stream ends it with
 * an `error` event, and a client that goes away is billed for what was produced.
 */
function messageEvents(model: string, inputTokens: number): SseEncoder<ChatItem> {
  let translator: MessageEvents | undefined;
  return {
    item(item) {
      if (!translator) {
        translator = new MessageEvents({ id: messageIdFor(item.chunk.id), model, inputTokens });
        return [...translator.start(), ...translator.push(item.chunk)].map(sseEvent).join('');
      }
      return translator.push(item.chunk).map(sseEvent).join('');
    },
    end: (outcome) =>
      (translator?.end(outcome.usage ?? tokensOnly(inputTokens, 0)) ?? []).map(sseEvent).join(''),
    fail: errorEvent,
  };
}

/**
 * An Anthropic model's own event stream, passed on event by event (the model id rewritten to the gateway's),
 * billed from the cumulative usage the events carry. `message_stop` is held back until the charge is durable,
 * so a stream whose settlement failed ends with an `error` event instead of as a success.
 */
function nativeEvents(model: string): SseEncoder<SseEvent> {
  let stop = '';
  return {
    item(event) {
      if (event.event === 'message_stop') {
        stop = `event: message_stop\ndata: ${event.data}\n\n`;
        return '';
      }
      let data = event.data;
      if (event.event === 'message_start') {
        const parsed = JSON.parse(data) as { message?: { model?: string } };
        if (parsed.message) parsed.message.model = model;
        data = JSON.stringify(parsed);
      }
      return `${event.event ? `event: ${event.event}\n` : ''}data: ${data}\n\n`;
    },
    end: () => stop,
    fail: errorEvent,
  };
}
