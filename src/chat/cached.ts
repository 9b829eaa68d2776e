import type { CacheAsk, Probe, ResponseCache } from '../cache/cache.ts';
import type { CachedAnswer, CachedChoice } from '../cache/entry.ts';
import { keyParts } from '../cache/key.ts';
import { deterministic, modeFor, modeOf, policyOf, thresholdOf } from '../cache/mode.ts';
import { semanticPrompt } from '../cache/semantic.ts';
import { RequestRefused } from '../contracts/errors.ts';
import { BYPASSED, type Bypassed, type CachedEndpoint, hitCharge, hitPrice } from '../pipeline/cached.ts';
import type { CallContext, Outcome } from '../pipeline/types.ts';
import type { RoutingDecision } from '../routing/router.ts';
import { parseStrategy } from '../routing/strategy.ts';
import type { ChatDeps, ChatItem } from './complete.ts';
import type { ChatModels } from './models.ts';
import { chatCharge } from './pricing.ts';
import { type ChatHit, hitUsage } from './replayed.ts';
import type { ChatCompletionRequest } from './request.ts';
import { type Routed, routeChat, routingOf } from './routed.ts';

/** The chat endpoints' part of the cache step (pipeline/cached.ts); each endpoint adds its answers and its call. */
export type ChatCache = Pick<
  CachedEndpoint<Probe, unknown, unknown, CachedChoice[]>,
  'lookup' | 'routing' | 'stream' | 'store'
>;

/**
 * How chat completions, and messages translated to them, use the response cache: the lookup, a routed hit's
 * saving, and the store. The lookup reads the request's models as resolved once (`models`), and a routing decision
 * it makes is kept there for the served call.
 */
export function chatCache(
  deps: ChatDeps,
  context: CallContext,
  body: ChatCompletionRequest,
  models: ChatModels,
  thresholdHeader: string | string[] | undefined,
  original?: { kind: string; body: Record<string, unknown> },
): ChatCache {
  return {
    lookup: () => lookupChat(deps, context, body, models, thresholdHeader, original),
    routing: (found) => {
      const { routed } = models;
      if (!routed.decision) return undefined;
      if (found) routed.savedNanos = routedHitSaving(deps, routed.decision, context, found);
      const { savedNanos } = routed;
      return { record: routingOf(routed), ...(savedNanos !== undefined && { savedNanos }) };
    },
    stream: body.stream === true,
    store: (probe, outcome, choices) =>
      saveChat(deps.cache, probe, context.requestId, outcome, choices, models.routed),
  };
}

/**
 * What the chat endpoints (chat completions, and messages translated to them) ask of the response cache: the key
 * of the model the request resolves to and everything that shapes its answer. Undefined when the cache is off or
 * the model does not resolve (the pipeline then gives its own refusal); `BYPASSED` when the request neither looks
 * up nor stores (`skip`, a sampled request in `auto`), which is decided before anything is keyed or read.
 *
 * A routed request (`auto`, `auto/text`, no model) is routed first, when the cache may look it up or store it:
 * the router is in memory, and the answer is the chosen model's, so the entry is keyed by that model and a hit
 * carries the routing headers of its own decision. The decision is kept in `models.routed` for the pipeline, which
 * then does not route again.
 */
async function lookupChat(
  deps: ChatDeps,
  context: CallContext,
  body: ChatCompletionRequest,
  models: ChatModels,
  thresholdHeader: string | string[] | undefined,
  /** A request in another format (Anthropic's), keyed as the client sent it: every field of it shapes the answer. */
  original?: { kind: string; body: Record<string, unknown> },
): Promise<Probe | Bypassed | undefined> {
  // Checked before the cache, as the router would on a miss: a misspelt strategy is refused even on a hit.
  parseStrategy(context.routing);
  const cache = deps.cache;
  if (!cache) return undefined;
  const { named, routed } = models;
  // A hit is served without the pipeline: a model the key may not use is refused here as the pipeline would; a
  // model that does not resolve is left to the pipeline's refusal. Only a key with a list is checked here, as the
  // served call checks every candidate; without one, a fallback that does not resolve still lets the lookup run.
  if (named && 'refused' in named && models.allowed !== null) {
    if (named.refused instanceof RequestRefused && named.refused.kind === 'forbidden') throw named.refused;
    return undefined;
  }
  const threshold = thresholdOf(thresholdHeader, cache.settings.threshold);
  const policy = policyOf(
    modeFor(cache.settings, context.auth.accountId, modeOf(body.cache)),
    deterministic(body),
  );
  const first = named && body.model !== undefined ? named.targets[0] : undefined;
  if (named && body.model !== undefined && !first) return undefined;
  if (!policy.exact && !policy.store) return BYPASSED;
  routed.decision = await routeChat(deps.router, context, body);
  // The key's model: the router's choice, else the named model; a request with no model but a `models` list is
  // keyed by that list (it is in the body) under `auto`.
  const model = routed.decision?.chosen.model.id ?? first?.model.id ?? 'auto';
  const translated = cache.embeds(policy) ? semanticPrompt('chat', model, body) : undefined;
  const semantic =
    translated && original
      ? { ...translated, group: { ...translated.group, original: withoutQuestion(original.body) } }
      : translated;
  const ask: CacheAsk = {
    policy,
    parts: original ? keyParts(original.kind, model, original.body) : keyParts('chat', model, body),
    threshold,
    ...(semantic && { semantic }),
  };
  const probe = await cache.lookup(context.auth, ask, context.signal);
  // An answer of a model the catalog no longer has is not served again; nor is an entry of another endpoint (keys
  // differ by endpoint, so none is expected).
  if (probe.hit && (probe.hit.entry.answer.kind !== 'chat' || !deps.catalog.get(probe.hit.entry.model))) {
    delete probe.hit;
    probe.status = 'miss';
    probe.cacheStatus = 'gateway; fwd=uri-miss';
  }
  return probe;
}

/**
 * An Anthropic request but its last user message (the question a semantic lookup compares) and the fields that do
 * not shape the answer (`cache`, `stream`, …), so that entries stored in any mode, plain or streamed, share a group.
 */
function withoutQuestion(body: Record<string, unknown>): Record<string, unknown> {
  const { messages, ...rest } = keyParts('messages', '', body).body as Record<string, unknown>;
  return { ...rest, earlier: Array.isArray(messages) ? messages.slice(0, -1) : messages };
}

/**
 * A routed hit's saving: the hit's usage priced at the baseline's rates as the hit is priced, less what the hit is
 * charged.
 */
function routedHitSaving(
  deps: ChatDeps,
  decision: RoutingDecision,
  context: CallContext,
  probe: ChatHit,
): bigint {
  // Both priced as the requester pays for a hit: the fee alone on a provider it brought its own key for.
  const { baseline } = decision;
  const baselineLines = chatCharge(baseline, hitUsage(probe), 'none').lines;
  const baselineNanos = hitPrice(deps.ownKeys, context.auth, baseline.provider, baselineLines).chargedNanos;
  return baselineNanos - hitCharge(deps.ownKeys, context.auth, probe).chargedNanos;
}

interface StoredMessage {
  content?: unknown;
  reasoning_content?: unknown;
  reasoning?: unknown;
  tool_calls?: unknown;
  function_call?: unknown;
  refusal?: unknown;
}

/**
 * The choices of an answer worth serving again, or undefined: every choice finished by itself (`stop`), with text
 * and no tool call and no refusal. A cut answer, a tool call or a refusal is never replayed.
 */
export function storableChoices(
  choices: { index?: unknown; message?: StoredMessage; finish_reason?: unknown; logprobs?: unknown }[],
): CachedChoice[] | undefined {
  if (choices.length === 0) return undefined;
  const out: CachedChoice[] = [];
  for (const [at, choice] of choices.entries()) {
    const message = choice.message ?? {};
    if (choice.finish_reason !== 'stop' || typeof message.content !== 'string') return undefined;
    // An entry keeps text, not token probabilities: an answer that carries them could not be replayed whole.
    if (choice.logprobs !== undefined && choice.logprobs !== null) return undefined;
    if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) return undefined;
    if (message.function_call || (message.refusal !== undefined && message.refusal !== null))
      return undefined;
    const reasoning = message.reasoning_content ?? message.reasoning;
    out.push({
      index: typeof choice.index === 'number' ? choice.index : at,
      content: message.content,
      reasoning: typeof reasoning === 'string' && reasoning !== '' ? reasoning : null,
      finishReason: 'stop',
    });
  }
  return out;
}

/**
 * Keeps a served chat answer when it may be served again. A routed request's entry is keyed by the model the
 * router chose, which a request naming that model shares: an answer a fallback served is not kept under it.
 */
async function saveChat(
  cache: ResponseCache | undefined,
  probe: Probe | undefined,
  requestId: string,
  outcome: Outcome,
  choices: CachedChoice[] | undefined,
  routed?: Routed,
): Promise<void> {
  if (!cache || !probe || !choices || !outcome.usage) return;
  if (routed?.decision && routed.decision.chosen.model.id !== outcome.model.id) return;
  const answer: CachedAnswer = { kind: 'chat', choices, usage: outcome.usage };
  await cache.save(probe, {
    model: outcome.model.id,
    provider: outcome.model.provider,
    requestId,
    charge: outcome.charge,
    usageReported: outcome.usageReported,
    units: outcome.units,
    answer,
  });
}

/**
 * Puts a streamed answer back together as it passes, to store it once the stream has ended well: its chunks'
 * text, reasoning, tool calls and finish reasons, per choice.
 */
export class StreamRecorder {
  private readonly choices = new Map<
    number,
    {
      index: number;
      message: StoredMessage & { content: string; reasoning_content: string };
      finish_reason?: unknown;
      logprobs?: unknown;
    }
  >();

  observe(item: ChatItem): void {
    for (const raw of item.chunk.choices as Record<string, unknown>[]) {
      const index = typeof raw.index === 'number' ? raw.index : 0;
      let choice = this.choices.get(index);
      if (!choice) {
        choice = { index, message: { content: '', reasoning_content: '' } };
        this.choices.set(index, choice);
      }
      const delta = (raw.delta ?? {}) as Record<string, unknown>;
      if (typeof delta.content === 'string') choice.message.content += delta.content;
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (typeof reasoning === 'string') choice.message.reasoning_content += reasoning;
      if (Array.isArray(delta.tool_calls) && delta.tool_calls.length > 0)
        choice.message.tool_calls = delta.tool_calls;
      if (delta.function_call) choice.message.function_call = delta.function_call;
      if (typeof delta.refusal === 'string') choice.message.refusal = delta.refusal;
      if (typeof raw.finish_reason === 'string') choice.finish_reason = raw.finish_reason;
      if (raw.logprobs !== undefined && raw.logprobs !== null) choice.logprobs = raw.logprobs;
    }
  }

  choicesToStore(): CachedChoice[] | undefined {
    return storableChoices([...this.choices.values()].sort((a, b) => a.index - b.index));
  }
}
