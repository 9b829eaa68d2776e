import type { CatalogModel } from '../catalog/types.ts';
import { type ChatDeps, chatPlan } from '../chat/complete.ts';
import type { ChatModels, ChatTarget } from '../chat/models.ts';
import { inputAtCacheWriteRate } from '../chat/pricing.ts';
import type { ChatCompletionRequest } from '../chat/request.ts';
import { chatBill, type PreparedChat, prepareChat } from '../chat/service.ts';
import type { NativeMessagesAdapter, SseEvent } from '../contracts/messages.ts';
import { meteredCall, type Plan, serve } from '../pipeline/call.ts';
import { MeteredStream } from '../pipeline/stream.ts';
import type { CallContext, Outcome } from '../pipeline/types.ts';
import { adapterFor } from '../providers/registry.ts';
import { writesPromptCache } from './cache-control.ts';

/** The pass-through adapter of a model whose provider speaks the Messages format itself. */
function nativeAdapter(model: CatalogModel): NativeMessagesAdapter {
  const adapter = adapterFor(model, 'messages');
  if (!adapter) throw new Error(`${model.id} has no native Messages adapter`);
  return adapter;
}

/**
 * The chat path's plan for a request sent as it came. With a cache breakpoint, Anthropic may bill every input
 * token as a cache write (1.25 times the input rate for 5 minutes, the only lifetime accepted), so the hold prices
 * the input at that rate; the translated way drops breakpoints, and its hold stays the chat path's.
 */
function nativePlan<T>(
  deps: ChatDeps,
  context: CallContext,
  original: Record<string, unknown>,
  counted: ChatCompletionRequest,
  call: (target: ChatTarget, prepared: PreparedChat) => Promise<T>,
  models?: ChatModels,
): Plan<ChatTarget, PreparedChat, T> {
  const plan = chatPlan(deps, context, counted, call, 'none', models);
  if (!writesPromptCache(original)) return plan;
  return {
    ...plan,
    reserve: (target, ownKeyOnly) =>
      prepareChat(
        deps.spending,
        context,
        target.model,
        counted,
        ownKeyOnly ? 'byok' : 'none',
        inputAtCacheWriteRate(target.model),
      ),
  };
}

/**
 * An Anthropic model asked in Anthropic's own format goes upstream as it came (bar the model id and the output
 * limit the gateway reserved for), and its answer comes back untranslated. The reservation and the charge
 * still go through the chat path's plan, from the request translated for counting only.
 */
export async function nativeComplete(
  deps: ChatDeps,
  context: CallContext,
  original: Record<string, unknown>,
  counted: ChatCompletionRequest,
  /** The request's models when the cache step resolved them already. */
  models?: ChatModels,
): Promise<Outcome & { message: Record<string, unknown> }> {
  const { result, outcome } = await meteredCall(deps, {
    ...nativePlan(
      deps,
      context,
      original,
      counted,
      (target, prepared) =>
        nativeAdapter(target.model).complete({
          body: original,
          upstream: target.upstream,
          maxTokens: prepared.outputLimit,
          signal: context.signal,
        }),
      models,
    ),
    bill: (answer, prepared) =>
      chatBill(prepared, answer.usage, nativeAdapter(prepared.model).text(answer.message)),
  });
  return { ...outcome, message: result.message };
}

/** The provider's own event stream, billed from the usage its events carry, settled when it ends. */
export async function nativeStream(
  deps: ChatDeps,
  context: CallContext,
  original: Record<string, unknown>,
  counted: ChatCompletionRequest,
  /** The request's models when the cache step resolved them already. */
  models?: ChatModels,
): Promise<MeteredStream<SseEvent>> {
  const served = await serve(
    deps,
    nativePlan(
      deps,
      context,
      original,
      counted,
      (target, prepared) =>
        nativeAdapter(target.model).stream({
          body: original,
          upstream: target.upstream,
          maxTokens: prepared.outputLimit,
          signal: context.signal,
        }),
      models,
    ),
  );
  const usage = nativeAdapter(served.candidate.model).streamUsage();
  return new MeteredStream(deps, served, {
    observe: (event) => usage.observe(event),
    bill: () => chatBill(served.reserved, usage.reported(), usage.produced),
  });
}
