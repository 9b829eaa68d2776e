import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import { nanosToCents } from '../../../billing/charge.ts';
import {
  type ChatDeps,
  clientError,
  completeChat,
  type OpenedStream,
  openChatStream,
} from '../../../chat/dispatch.ts';
import { ChatCompletionRequest, isValidTag, requestTag } from '../../../chat/request.ts';
import { completionId, settleChat } from '../../../chat/service.ts';
import { RequestRefused } from '../../../contracts/errors.ts';
import type { ChatChunk, ReportedUsage } from '../../../providers/types.ts';
import { describeError } from '../../errors.ts';
import { openEventStream } from '../../event-stream.ts';

export const chatRoutes =
  (deps: ChatDeps, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    app.post('/chat/completions', { schema: { body: ChatCompletionRequest } }, async (request, reply) => {
      const body = request.body;
      const tagHeader = request.headers['x-gw-tag'];
      if (!isValidTag(tagHeader)) {
        throw new RequestRefused('invalid', "'x-gw-tag': 1 to 128 printable characters");
      }
      const sub = request.auth.subAccountId ? live.subAccount(request.auth.subAccountId) : undefined;
      const tag = requestTag(tagHeader, sub?.defaultTag ?? null);
      // A client that goes away stops the upstream call too (and is billed for what was produced).
      const gone = new AbortController();
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) gone.abort();
      });
      reply.header('x-cache-status', 'miss');

      if (body.stream) {
        const opened = await openChatStream(deps, request.auth, body, request.id, tag, gone.signal);
        return relayStream(reply, opened, deps, body.stream_options?.include_usage === true);
      }
      const served = await completeChat(deps, request.auth, body, request.id, tag, gone.signal);
      reply
        .header('x-model', served.target.model.id)
        .header('x-provider', served.target.model.provider)
        .header('x-latency-ms', String(served.latencyMs))
        .header('x-cost-cents', String(nanosToCents(served.costNanos)));
      return { ...served.completion, id: served.completion.id ?? completionId() };
    });
  };

function deltaText(chunk: ChatChunk): string {
  return chunk.choices
    .map((choice) => (choice as { delta?: { content?: unknown } }).delta?.content)
    .filter((content): content is string => typeof content === 'string')
    .join('');
}

/**
 * Forwards the provider's chunks as they arrive. Usage is always requested upstream (it is what the request is
 * billed on) but passed on only when the client asked for it, with the charge added as `usage.cost_cents`; the
 * cost is known only at the end, so a stream has no X-Cost-Cents header. A failure mid-stream ends the stream
 * with an error chunk; a client that goes away is billed for what was produced.
 */
async function relayStream(reply: FastifyReply, opened: OpenedStream, deps: ChatDeps, includeUsage: boolean) {
  const { target, prepared } = opened;
  const stream = openEventStream(reply, opened);
  const write = (payload: unknown) => stream.write(`data: ${JSON.stringify(payload)}\n\n`);
  let produced = '';
  let usage: ReportedUsage | undefined;
  let usageChunk: ChatChunk | undefined;
  let failure: unknown;
  const forward = async (item: { chunk: ChatChunk; usage?: ReportedUsage }) => {
    const chunk = { ...item.chunk, model: target.model.id };
    produced += deltaText(chunk);
    if (item.usage) {
      usage = item.usage;
      usageChunk = chunk;
      if (chunk.choices.length === 0) return; // sent after settlement, with its cost
      delete chunk.usage;
    }
    await write(chunk);
  };
  try {
    await forward(opened.first);
    for (let next = await opened.rest.next(); !next.done; next = await opened.rest.next()) {
      if (stream.gone()) break;
      await forward(next.value);
    }
  } catch (error) {
    failure = clientError(error, target.model.id);
  } finally {
    if (stream.gone()) await opened.rest.return?.();
  }
  let unsettled: unknown;
  const cost = await settleChat(deps.spending, prepared, usage, produced).catch((error: unknown) => {
    // The hold stays and expires; the audit reports the request as held but never settled.
    reply.log.error({ err: error, holdId: prepared.hold.holdId }, 'settling a streamed request failed');
    unsettled = error;
    return undefined;
  });
  if (stream.gone()) return;
  if (failure) await write(describeError(failure).body);
  // An answer whose charge is not durable does not end as a success (the database was away for too long).
  else if (unsettled !== undefined) await write(describeError(unsettled).body);
  else if (includeUsage && usageChunk) {
    await write({
      ...usageChunk,
      usage: { ...(usageChunk.usage as object), cost_cents: nanosToCents(cost ?? 0n) },
    });
  }
  stream.end('data: [DONE]\n\n');
}
