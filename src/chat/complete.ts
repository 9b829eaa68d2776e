import { createHash } from 'node:crypto';
import { permitModel } from '../accounts/model-access.ts';
import type { ResponseCache } from '../cache/cache.ts';
import type { ChatChunk, ChatCompletion, ReportedUsage } from '../contracts/chat.ts';
import type { Discount } from '../contracts/money.ts';
import { meteredCall, type Plan, serve } from '../pipeline/call.ts';
import { ownerOf } from '../pipeline/own-key.ts';
import { MeteredStream, type Opened, type StreamMeter } from '../pipeline/stream.ts';
import type { CallContext, Outcome, PipelineDeps } from '../pipeline/types.ts';
import { UpstreamError } from '../providers/errors.ts';
import type { Router } from '../routing/router.ts';
import { type ChatModels, type ChatTarget, chatModels, namedTargets, resolveChatModel } from './models.ts';
import type { ChatCompletionRequest } from './request.ts';
import { routeChat, routedBill, routingOf } from './routed.ts';
import { chatBill, type PreparedChat, prepareChat } from './service.ts';

export interface ChatDeps extends PipelineDeps {
  /** Per-model fallbacks from the config file, used when a request gives no `models` of its own. */
  fallbacks: Record<string, string[]>;
  /** The automatic router, for `auto`, `auto/text` and an omitted model. */
  router: Router;
  /** The response cache, consulted by the endpoints that serve clients (never by batches or replays). */
  cache?: ResponseCache;
}

/** One item of a chat stream: a chunk, and the usage when the provider reports it there. */
export interface ChatItem {
  chunk: ChatChunk;
  usage?: ReportedUsage;
}

/**
 * A chat request as the pipeline runs it: the model and its fallbacks, each held for its worst case (the input,
 * and the output limit for every choice), and the call the feature makes on the one that serves.
 */
export function chatPlan<T>(
  deps: ChatDeps,
  context: CallContext,
  body: ChatCompletionRequest,
  call: (target: ChatTarget, prepared: PreparedChat) => Promise<T>,
  discount: Discount = 'none',
  /** The request's models when the cache step resolved them already (chat/cached.ts), else resolved here. */
  models: ChatModels = chatModels(deps, context, body),
): Plan<ChatTarget, PreparedChat, T> {
  const { routed } = models;
  const owner = ownerOf(context, discount);
  return {
    ...(context.log && { log: context.log }),
    routing: () => routingOf(routed),
    resolve: async () => {
      // The cache may have routed the request already (it keys a routed answer by the chosen model).
      routed.decision ??= await routeChat(deps.router, context, body);
      if (!routed.decision) {
        if (!models.named) throw new Error('a chat request neither routed nor naming its models');
        return namedTargets(models.named);
      }
      // The router chose among the models the key may use; checked again as any candidate is.
      return routed.decision.order.map((model) => {
        permitModel(models.allowed, model.id);
        return resolveChatModel(deps.catalog, deps.env, deps.timeoutMs, model.id);
      });
    },
    // Held at the fee alone when only the requester's own provider key may serve (docs/billing.md).
    reserve: (target, ownKeyOnly) =>
      prepareChat(deps.spending, context, target.model, body, ownKeyOnly ? 'byok' : discount),
    call,
    // Own provider keys serve a client's requests and its batch lines; the gateway's own work keeps the pools.
    ...(owner && { owner }),
    affinity: {
      key: () => openingOf(context, body),
      ...(context.preferCredential !== undefined && { prefer: context.preferCredential }),
    },
  };
}

/**
 * A conversation's opening as its pool credential is remembered by: the requester, its first instructions and its
 * first user turn (later turns repeat them), hashed so that a long prompt costs the memory of a hash.
 */
function openingOf(context: CallContext, body: ChatCompletionRequest): string {
  const messages = (body.messages ?? []) as { role?: unknown; content?: unknown }[];
  const first = (roles: string[]) => messages.find((m) => roles.includes(String(m.role)))?.content ?? null;
  return createHash('sha256')
    .update(
      JSON.stringify([
        context.auth.accountId,
        context.auth.subAccountId,
        first(['system', 'developer']),
        first(['user']),
      ]),
    )
    .digest('base64url');
}

/** A chat call's outcome always carries the tokens billed: the provider's, or the gateway's estimate. */
export type ChatOutcome = Outcome & { usage: ReportedUsage };

export function chatOutcome(outcome: Outcome): ChatOutcome {
  if (!outcome.usage) throw new Error('a chat charge without its tokens');
  return { ...outcome, usage: outcome.usage };
}

function upstreamBody(body: ChatCompletionRequest, prepared: PreparedChat) {
  const { max_completion_tokens: _ignored, ...rest } = body;
  return { ...rest, max_tokens: prepared.outputLimit };
}

function replyText(completion: ChatCompletion): string {
  const message = (completion.choices[0] as { message?: { content?: unknown } } | undefined)?.message;
  return typeof message?.content === 'string' ? message.content : '';
}

/** A chat completion through the pipeline, settled: the answer (its model the gateway's id) and the outcome. */
export async function completeChat(
  deps: ChatDeps,
  context: CallContext,
  body: ChatCompletionRequest,
  discount: Discount = 'none',
  /** The request's models (and routing decision) when the cache step has them (chat/cached.ts). */
  models: ChatModels = chatModels(deps, context, body),
): Promise<ChatOutcome & { completion: ChatCompletion }> {
  const { routed } = models;
  const { result, outcome } = await meteredCall(deps, {
    ...chatPlan(
      deps,
      context,
      body,
      (target, prepared) =>
        target.adapter.complete({
          body: upstreamBody(body, prepared),
          upstream: target.upstream,
          signal: context.signal,
        }),
      discount,
      models,
    ),
    bill: async ({ completion, usage }, prepared) =>
      routedBill(
        deps.router,
        routed,
        await chatBill(prepared, usage, replyText(completion)),
        discount,
        prepared.model.id,
      ),
  });
  result.completion.model = outcome.model.id;
  return { ...chatOutcome(outcome), completion: result.completion };
}

function deltaText(chunk: ChatChunk): string {
  return chunk.choices
    .map((choice) => (choice as { delta?: { content?: unknown } }).delta?.content)
    .filter((content): content is string => typeof content === 'string')
    .join('');
}

/** Bills a chat stream on the provider's usage when it reports it, else on the text that passed. */
function chatMeter(prepared: PreparedChat): StreamMeter<ChatItem> {
  let produced = '';
  let usage: ReportedUsage | undefined;
  return {
    observe(item) {
      produced += deltaText(item.chunk);
      if (item.usage) usage = item.usage;
    },
    bill: () => chatBill(prepared, usage, produced),
  };
}

/**
 * A streamed chat completion: opened once its first chunk arrived (so a failing model can still fall back to the
 * next), and settled by the pipeline when the stream ends.
 */
export async function streamChat(
  deps: ChatDeps,
  context: CallContext,
  body: ChatCompletionRequest,
  /** The request's models (and routing decision) when the cache step has them (chat/cached.ts). */
  models: ChatModels = chatModels(deps, context, body),
): Promise<MeteredStream<ChatItem, PreparedChat>> {
  const { routed } = models;
  const served = await serve(
    deps,
    chatPlan(
      deps,
      context,
      body,
      async (target, prepared): Promise<Opened<ChatItem>> => {
        const rest = target.adapter
          .stream({ body: upstreamBody(body, prepared), upstream: target.upstream, signal: context.signal })
          [Symbol.asyncIterator]();
        const first = await rest.next();
        if (first.done) throw new UpstreamError('server', 'the provider closed the stream without a chunk');
        return { first: first.value, rest };
      },
      'none',
      models,
    ),
  );
  const meter = chatMeter(served.reserved);
  return new MeteredStream(deps, served, {
    observe: (item) => meter.observe(item),
    bill: async () => routedBill(deps.router, routed, await meter.bill(), 'none', served.candidate.model.id),
  });
}
