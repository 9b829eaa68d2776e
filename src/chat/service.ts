import { randomBytes } from 'node:crypto';
import type { Hold, Spending } from '../billing/spending.ts';
import type { CatalogModel } from '../catalog/types.ts';
import type { ReportedUsage } from '../contracts/chat.ts';
import { RequestRefused } from '../contracts/errors.ts';
import type { Discount } from '../contracts/money.ts';
import { reserve } from '../pipeline/ledger.ts';
import type { Bill, CallContext } from '../pipeline/types.ts';
import { countChatInputTokensAsync, countTextTokensAsync } from '../tokens/count.ts';
import { affordableOutputTokens, chatCharge, tokensOnly } from './pricing.ts';
import type { ChatCompletionRequest } from './request.ts';

/** The output limit sent for a request that names none, when the model's own limit is unknown. */
const DEFAULT_MAX_OUTPUT = 8192;
/** Sampling parameters a reasoning model refuses; OpenAI's accept only the default, 1. */
const SAMPLING_FIELDS = ['temperature', 'top_p'] as const;

export interface PreparedChat {
  model: CatalogModel;
  inputTokens: number;
  /** The output limit sent upstream: the client's, or as much as the hold affords. */
  outputLimit: number;
  hold: Hold;
  /** `batch` for a line of a batch: held and charged at the batch price. */
  discount: Discount;
}

/**
 * Fields that make a provider bill beyond the tokens the hold is priced on: audio output (per audio token, at
 * several times the text rate) and web search (per call). Refused rather than served at a price never held.
 */
function refuseUnheldCosts(body: ChatCompletionRequest): void {
  const modalities = (body as { modalities?: unknown }).modalities;
  if (
    (Array.isArray(modalities) && modalities.some((m) => m !== 'text')) ||
    (body as { audio?: unknown }).audio !== undefined
  ) {
    throw new RequestRefused(
      'invalid',
      "'modalities': only text output is served on /chat/completions (audio output is billed per audio token, which is not held for); use /v1/audio/speech",
    );
  }
  if ((body as { web_search_options?: unknown }).web_search_options !== undefined) {
    throw new RequestRefused(
      'invalid',
      "'web_search_options': web search is billed per call by the provider, which this gateway does not hold for",
    );
  }
}

/** How many choices the provider produces and bills. */
export function choicesOf(body: ChatCompletionRequest): number {
  return body.n ?? 1;
}

/**
 * Providers whose chat API returns `n` choices. The others (Anthropic, Gemini as translated, most OpenAI-compatible
 * hosts) answer one, so `n > 1` there is refused rather than silently served as one choice.
 */
const MANY_CHOICES = new Set(['local', 'openai', 'azure']);

/** Refusals that need no reservation: parameters the model does not take, limits it does not have. */
export function checkRequest(model: CatalogModel, body: ChatCompletionRequest, inputTokens: number): number {
  refuseUnheldCosts(body);
  if (choicesOf(body) > 1 && !MANY_CHOICES.has(model.provider)) {
    throw new RequestRefused(
      'invalid',
      `'n': ${model.id} answers one choice per request; send ${choicesOf(body)} requests, or use a model that takes n (openai/…, local/…)`,
    );
  }
  if (model.quirks.noSampling) {
    for (const field of SAMPLING_FIELDS) {
      const value = body[field];
      if (value !== undefined && value !== 1) {
        throw new RequestRefused('invalid', `'${field}': ${model.id} does not accept sampling parameters`);
      }
    }
  }
  if (model.contextWindow !== null && inputTokens >= model.contextWindow) {
    throw new RequestRefused(
      'invalid',
      `'messages': ${inputTokens} input tokens exceed the context window of ${model.id} (${model.contextWindow})`,
    );
  }
  const room = model.contextWindow === null ? Number.POSITIVE_INFINITY : model.contextWindow - inputTokens;
  // A model's own output limit binds when the price list gives one; otherwise only the context window does.
  const ceiling = Math.min(model.maxOutputTokens ?? Number.POSITIVE_INFINITY, room);
  const requested = body.max_completion_tokens ?? body.max_tokens;
  if (requested !== undefined && requested > ceiling) {
    const field = body.max_completion_tokens === undefined ? 'max_tokens' : 'max_completion_tokens';
    throw new RequestRefused('invalid', `'${field}': at most ${ceiling} for ${model.id} with this input`);
  }
  // Without a limit from the client, the hold (and the limit sent upstream) stops at a sane default.
  const limit = requested ?? Math.min(model.maxOutputTokens ?? DEFAULT_MAX_OUTPUT, room);
  return limit;
}

/** Messages, plus tool definitions and a response schema, which providers bill as input too. */
export function countInputTokens(body: ChatCompletionRequest): Promise<number> {
  // Counted once per request body (the router, the hold and every fallback's hold ask for the same figure), unless
  // a caller has since put other messages, tools or a schema in it.
  const seen = counted.get(body);
  if (
    seen &&
    seen.messages === body.messages &&
    seen.tools === body.tools &&
    seen.format === body.response_format
  )
    return seen.count;
  const count = countUncached(body);
  counted.set(body, { messages: body.messages, tools: body.tools, format: body.response_format, count });
  return count;
}

const counted = new WeakMap<
  ChatCompletionRequest,
  { messages: unknown; tools: unknown; format: unknown; count: Promise<number> }
>();

async function countUncached(body: ChatCompletionRequest): Promise<number> {
  const extras = [body.tools, body.response_format].filter((part) => part !== undefined);
  const messages = await countChatInputTokensAsync(body.messages);
  return messages + (extras.length > 0 ? await countTextTokensAsync(JSON.stringify(extras)) : 0);
}

/**
 * Reserves the worst case before anything is dispatched: input tokens at the input price plus the output limit
 * at the output price. With no limit from the client, the hold is as large as every cap allows up to the model's
 * own output limit, and that is the limit sent upstream, so a request is never refused only for lacking one.
 */
export async function prepareChat(
  spending: Spending,
  context: Pick<CallContext, 'auth' | 'requestId' | 'tag'>,
  model: CatalogModel,
  body: ChatCompletionRequest,
  discount: Discount = 'none',
): Promise<PreparedChat> {
  const inputTokens = await countInputTokens(body);
  const limit = checkRequest(model, body, inputTokens);
  const requested = body.max_completion_tokens ?? body.max_tokens;
  // The output limit binds each choice; the input is billed once.
  const choices = choicesOf(body);
  const worst = chatCharge(
    model,
    tokensOnly(inputTokens, (requested ?? limit) * choices),
    discount,
  ).chargedNanos;
  const least =
    requested === undefined
      ? chatCharge(model, tokensOnly(inputTokens, choices), discount).chargedNanos
      : worst;
  const hold = await reserve(spending, context, { minNanos: least, maxNanos: worst });
  const outputLimit =
    requested ??
    Math.max(1, affordableOutputTokens(model, inputTokens, limit, hold.grantedNanos, discount, choices));
  return { model, inputTokens, outputLimit, hold, discount };
}

/** What was produced, billed; usage the provider did not report is estimated, and the charge says so. */
export async function chatBill(
  prepared: PreparedChat,
  usage: ReportedUsage | undefined,
  producedText: string,
): Promise<Bill> {
  const billed = usage ?? tokensOnly(prepared.inputTokens, await countTextTokensAsync(producedText));
  return {
    charge: chatCharge(prepared.model, billed, prepared.discount),
    usageReported: usage !== undefined,
    units: billed.promptTokens + billed.completionTokens,
    usage: billed,
  };
}

export function completionId(): string {
  return `chatcmpl-${randomBytes(12).toString('hex')}`;
}
