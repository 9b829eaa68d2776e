import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import { nanosToCents } from '../../../billing/charge.ts';
import type { Spending } from '../../../billing/spending.ts';
import { ChatCompletionRequest, isValidTag, requestTag } from '../../../chat/request.ts';
import { completionId, type PreparedChat, prepareChat, settleChat } from '../../../chat/service.ts';
import { echoChat, echoChunks } from '../../../providers/local/echo.ts';
import { countTextTokens } from '../../../tokens/count.ts';
import { ApiError } from '../../errors.ts';

export interface ChatRouteDeps {
  spending: Spending;
  live: LiveAccounts;
}

export const chatRoutes =
  ({ spending, live }: ChatRouteDeps): FastifyPluginAsyncZod =>
  async (app) => {
    app.post('/chat/completions', { schema: { body: ChatCompletionRequest } }, async (request, reply) => {
      const body = request.body;
      const tagHeader = request.headers['x-gw-tag'];
      if (!isValidTag(tagHeader)) {
        throw new ApiError(400, 'invalid_request_error', "'x-gw-tag': 1 to 128 printable characters");
      }
      const sub = request.auth.subAccountId ? live.subAccount(request.auth.subAccountId) : undefined;
      const tag = requestTag(tagHeader, sub?.defaultTag ?? null);
      const prepared = await prepareChat(spending, request.auth, body, request.id, tag);
      reply.header('x-model', prepared.model.id).header('x-provider', prepared.model.provider);
      reply.header('x-cache-status', 'miss');

      const started = performance.now();
      let result: ReturnType<typeof echoChat>;
      try {
        result = echoChat({ messages: body.messages, maxTokens: prepared.outputLimit });
      } catch (error) {
        await spending.release(prepared.hold, 'failed');
        throw error;
      }
      const latency = Math.round(performance.now() - started);
      const created = Math.floor(Date.now() / 1000);
      const id = completionId();

      if (body.stream) {
        const includeUsage = body.stream_options?.include_usage === true;
        return streamEcho(reply, { id, created, prepared, result, latency, includeUsage }, spending);
      }
      const cost = await settleChat(spending, prepared, result.usage, result.content);
      reply.header('x-latency-ms', String(latency)).header('x-cost-cents', String(nanosToCents(cost)));
      return {
        id,
        object: 'chat.completion',
        created,
        model: prepared.model.id,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: result.content, refusal: null },
            logprobs: null,
            finish_reason: result.finishReason,
          },
        ],
        usage: {
          prompt_tokens: result.usage.promptTokens,
          completion_tokens: result.usage.completionTokens,
          total_tokens: result.usage.promptTokens + result.usage.completionTokens,
        },
      };
    });
  };

interface StreamInput {
  id: string;
  created: number;
  prepared: PreparedChat;
  result: ReturnType<typeof echoChat>;
  latency: number;
  includeUsage: boolean;
}

/**
 * Server-sent chunks in the chat-completions stream format. A client that goes away mid-stream is billed for
 * what was produced up to then. The cost is known only at the end, so it travels in the final usage chunk
 * (`usage.cost_cents`) rather than in a header.
 */
async function streamEcho(reply: FastifyReply, input: StreamInput, spending: Spending): Promise<void> {
  const { prepared, result } = input;
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-latency-ms': String(input.latency),
  });
  let gone = false;
  raw.on('close', () => {
    gone = !raw.writableFinished;
  });
  const base = {
    id: input.id,
    object: 'chat.completion.chunk',
    created: input.created,
    model: prepared.model.id,
  };
  const send = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    raw.write(`data: ${JSON.stringify({ ...base, choices, ...extra })}\n\n`);

  send([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]);
  let produced = '';
  for (const delta of echoChunks(result)) {
    if (gone) break;
    produced += delta;
    if (!send([{ index: 0, delta: { content: delta }, logprobs: null, finish_reason: null }])) {
      await new Promise<void>((resolve) => {
        raw.once('drain', resolve);
        raw.once('close', resolve);
      });
    }
  }
  const usage = {
    promptTokens: result.usage.promptTokens,
    completionTokens: produced === result.content ? result.usage.completionTokens : countTextTokens(produced),
  };
  const cost = await settleChat(spending, prepared, usage, produced);
  if (gone) return;
  send([{ index: 0, delta: {}, logprobs: null, finish_reason: result.finishReason }]);
  if (input.includeUsage) {
    send([], {
      usage: {
        prompt_tokens: usage.promptTokens,
        completion_tokens: usage.completionTokens,
        total_tokens: usage.promptTokens + usage.completionTokens,
        cost_cents: nanosToCents(cost),
      },
    });
  }
  raw.end('data: [DONE]\n\n');
}
