import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import { chatCache, StreamRecorder, storableChoices } from '../../../chat/cached.ts';
import { type ChatDeps, type ChatItem, completeChat, streamChat } from '../../../chat/complete.ts';
import { chatModels } from '../../../chat/models.ts';
import { hitCompletion, hitItems } from '../../../chat/replayed.ts';
import { ChatCompletionRequest } from '../../../chat/request.ts';
import { completionId } from '../../../chat/service.ts';
import type { ChatChunk } from '../../../contracts/chat.ts';
import { nanosToCents } from '../../../contracts/money.ts';
import { cachedCall } from '../../../pipeline/cached.ts';
import { usdText } from '../../../pipeline/headers.ts';
import { relayRecorded, replaySse } from '../../cached.ts';
import { describeError } from '../../errors.ts';
import { callContext, relaySse, type SseEncoder } from '../../served.ts';

export const chatRoutes =
  (deps: ChatDeps, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    app.post('/chat/completions', { schema: { body: ChatCompletionRequest } }, async (request, reply) => {
      const body = request.body;
      const context = callContext(request, reply, live);
      // Resolved once: the cache step and the served call read the same models and routing decision.
      const models = chatModels(deps, context, body);
      const cache = chatCache(deps, context, body, models, request.headers['x-gw-cache-threshold']);
      const headers = (values: Record<string, string>) => {
        reply.headers(values);
      };
      if (!body.stream) {
        const call = await cachedCall(
          deps,
          context,
          {
            ...cache,
            answer: hitCompletion,
            serve: () => completeChat(deps, context, body, 'none', models),
            kept: (served) => ({
              outcome: served,
              answer: storableChoices(served.completion.choices as never[]),
            }),
          },
          headers,
        );
        if (call.hit) return call.answer;
        const { completion } = call.served;
        return { ...completion, id: completion.id ?? completionId() };
      }
      const includeUsage = body.stream_options?.include_usage === true;
      const call = await cachedCall(
        deps,
        context,
        {
          ...cache,
          answer: hitItems,
          recorded: hitCompletion,
          async serve(keeps) {
            const stream = await streamChat(deps, context, body, models);
            const encoder = chatChunks(stream.model.id, includeUsage);
            // An answer that will not be stored is relayed without being put back together as it passes.
            if (!keeps) return () => relaySse(reply, stream, encoder);
            return relayRecorded(reply, stream, encoder, new StreamRecorder());
          },
        },
        headers,
      );
      if (!call.hit) return call.served(call.keep);
      return replaySse(reply, call.outcome, call.answer, chatChunks(call.outcome.model.id, includeUsage));
    });
  };

const data = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`;

/**
 * The provider's chunks as they arrive, under the gateway's model id. Usage is always requested upstream (it is
 * what the request is billed on) but passed on only when the client asked for it, with the charge added as
 * `usage.cost_cents`; the cost is known only at the end, so a stream has no X-Cost-Cents header. A failure
 * mid-stream, or a charge that could not be made durable, ends the stream with an error chunk.
 */
function chatChunks(model: string, includeUsage: boolean): SseEncoder<ChatItem> {
  let usageChunk: ChatChunk | undefined;
  return {
    item(item) {
      const chunk = { ...item.chunk, model };
      if (item.usage) {
        usageChunk = chunk;
        if (chunk.choices.length === 0) return ''; // sent after settlement, with its cost
        delete chunk.usage;
      }
      return data(chunk);
    },
    end(outcome) {
      const usage =
        includeUsage && usageChunk
          ? data({
              ...usageChunk,
              usage: {
                ...(usageChunk.usage as object),
                cost_cents: nanosToCents(outcome.costNanos),
                // A routed stream's saving, which its headers went out too early to carry.
                ...(outcome.savedNanos !== undefined && { saved_usd: usdText(outcome.savedNanos) }),
              },
            })
          : '';
      return `${usage}data: [DONE]\n\n`;
    },
    fail: (failure) => `${data(describeError(failure).body)}data: [DONE]\n\n`,
  };
}
