import type { KeyHolder } from '../accounts/live-state.ts';
import type { ReportedUsage } from '../contracts/chat.ts';
import type { Discount } from '../contracts/money.ts';
import { routingHeaders } from '../pipeline/headers.ts';
import type { Bill, CallContext } from '../pipeline/types.ts';
import { conversationKey } from '../routing/conversations.ts';
import { routingRecord } from '../routing/record.ts';
import type { RouteAsk, Router, RoutingDecision } from '../routing/router.ts';
import { parseStrategy, routedModel } from '../routing/strategy.ts';
import { chatCharge } from './pricing.ts';
import type { ChatCompletionRequest } from './request.ts';
import { choicesOf, countInputTokens } from './service.ts';

/** A routed request's decision, once made, and its saving once the request is billed. */
export interface Routed {
  decision?: RoutingDecision;
  savedNanos?: bigint;
}

type Part = { type?: unknown };
const parts = (content: unknown): Part[] => (Array.isArray(content) ? (content as Part[]) : []);
const IMAGE_PARTS = new Set(['image_url', 'input_image', 'image']);

function lastUserText(body: ChatCompletionRequest): string {
  for (let i = body.messages.length - 1; i >= 0; i--) {
    const message = body.messages[i];
    if (message?.role !== 'user') continue;
    if (typeof message.content === 'string') return message.content;
    return parts(message.content)
      .map((p) => (typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : ''))
      .join('\n');
  }
  return '';
}

/** What a chat request asks of a model, for the router. */
export async function routeAsk(
  auth: Pick<KeyHolder, 'accountId' | 'subAccountId'>,
  requested: 'auto' | 'auto/text',
  strategy: RouteAsk['strategy'],
  body: ChatCompletionRequest,
): Promise<RouteAsk> {
  const format = body.response_format?.type;
  const sampling = [body.temperature, (body as { top_p?: unknown }).top_p].some(
    (v) => v !== undefined && v !== 1,
  );
  const tools =
    (Array.isArray(body.tools) && body.tools.length > 0) ||
    Array.isArray((body as { functions?: unknown }).functions);
  const outputLimit = body.max_completion_tokens ?? body.max_tokens;
  const { accountId } = auth;
  const conversation = conversationKey(accountId, body.messages, {
    requested,
    strategy,
    ...(body.baseline_model !== undefined && { baselineModel: body.baseline_model }),
  });
  return {
    accountId,
    subAccountId: auth.subAccountId,
    requested,
    strategy,
    inputTokens: await countInputTokens(body),
    ...(outputLimit !== undefined && { outputLimit }),
    choices: choicesOf(body),
    tools,
    images: body.messages.some((m) => parts(m.content).some((p) => IMAGE_PARTS.has(String(p.type)))),
    json: format === 'json_object' || format === 'json_schema',
    reasoning: body.reasoning_effort !== undefined && body.reasoning_effort !== 'none',
    stream: body.stream === true,
    sampling,
    ...(body.baseline_model !== undefined && { baselineModel: body.baseline_model }),
    ...(conversation && { conversation }),
    complexity: {
      lastUserText: lastUserText(body),
      messages: body.messages.length,
      ...(body.reasoning_effort !== undefined && { reasoningEffort: body.reasoning_effort }),
    },
  };
}

/** Whether the router chooses the model: `auto`, `auto/text`, or no model and no `models` list. */
export function routes(body: Pick<ChatCompletionRequest, 'model' | 'models'>): boolean {
  const listed = Array.isArray(body.models) && body.models.length > 0;
  return routedModel(body.model) !== undefined && !(body.model === undefined && listed);
}

/** The router's decision as the request's record keeps it, with its saving once known; undefined when not routed. */
export const routingOf = (routed: Routed): unknown =>
  routed.decision && routingRecord(routed.decision, routed.savedNanos);

/**
 * Whether the request is the router's (`auto`, `auto/text`, or no model and no `models` list) and, if so, its
 * decision, told through the context to the answer's headers; the request's record takes it from `routingOf`. The `x-routing` header
 * is checked on every chat request, routed or not, so that a misspelt strategy is never silently ignored.
 */
export async function routeChat(
  router: Router,
  context: CallContext,
  body: ChatCompletionRequest,
): Promise<RoutingDecision | undefined> {
  const strategy = parseStrategy(context.routing);
  const requested = routedModel(body.model);
  if (!requested || !routes(body)) return undefined;
  const decision = await router.route(await routeAsk(context.auth, requested, strategy, body));
  context.onRouted?.(
    routingHeaders({
      strategy: decision.strategy,
      model: decision.chosen.model.id,
      reason: decision.reason,
      baseline: decision.baseline.id,
    }),
  );
  return decision;
}

/**
 * The saving of a routed request: its usage (cache reads and writes included) priced at the baseline's rates,
 * less what it was charged. The bill carries it with the decision, for the record the settlement writes.
 */
export function routedBill(
  router: Router,
  routed: Routed,
  bill: Bill,
  discount: Discount,
  servedBy: string,
): Bill {
  const decision = routed.decision;
  if (!decision) return bill;
  const usage: ReportedUsage | undefined = bill.usage;
  const baseline = usage
    ? chatCharge(decision.baseline, usage, discount).chargedNanos
    : bill.charge.chargedNanos;
  routed.savedNanos = baseline - bill.charge.chargedNanos;
  router.served(decision, servedBy);
  return { ...bill, savedNanos: routed.savedNanos, routing: routingRecord(decision, routed.savedNanos) };
}
