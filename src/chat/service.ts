import { randomBytes } from 'node:crypto';
import type { Hold, Spending } from '../billing/spending.ts';
import type { CatalogModel } from '../catalog/types.ts';
import type { ReportedUsage } from '../contracts/chat.ts';
import { RequestRefused } from '../contracts/errors.ts';
import type { Discount } from '../contracts/money.ts';
import type { AdmittedTokens, Bill, CallContext } from '../pipeline/types.ts';
import { countChatInputTokensAsync, countTextTokensAsync } from '../tokens/count.ts';
import { holdOutput } from './output-hold.ts';
import { refuseUnpricedFields } from './priced-fields.ts';
import { chatCharge, tokensOnly } from './pricing.ts';
import type { ChatCompletionRequest } from './request.ts';

/** The output limit sent for a request that names none, when the model's own limit is unknown. */
const DEFAULT_MAX_OUTPUT = 8192;
/** Sampling parameters a reasoning model refuses; OpenAI's accept only the default, 1. */
const SAMPLING_FIELDS = ['temperature', 'top_p'] as const;

export interface PreparedChat {
  model: CatalogModel;
  inputTokens: number;
  /** The output limit sent upstream: the client's or the model's, or, when the client opted in, what the caps afford. */
  outputLimit: number;
  hold: Hold;
  /** `batch` for a line of a batch: held and charged at the batch price. */
  discount: Discount;
  /** The worst case's tokens, when the caller has a tokens-per-minute limit. */
  tokens?: AdmittedTokens;
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
  refuseUnpricedFields(model, body);
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
  // Without a limit from the client, the hold (and the limit sent upstream) is the model's own, or a sane default.
  const limit = requested ?? Math.min(model.maxOutputTokens ?? DEFAULT_MAX_OUTPUT, room);
  return limit;
}

/** The text of a predicted output, which the provider bills (what it rejects, as output). */
function predictionText(body: ChatCompletionRequest): string {
  const content = body.prediction?.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (typeof part.text === 'string' ? part.text : '')).join('');
}

interface Counts {
  /** What was counted, so that a caller who since put other messages, tools or a prediction in is counted anew. */
  parts: unknown[];
  input: Promise<number>;
  predicted: Promise<number>;
}

const counted = new WeakMap<ChatCompletionRequest, Counts>();

const countedParts = (body: ChatCompletionRequest): unknown[] => [
  body.messages,
  body.tools,
  body.functions,
  body.response_format,
  body.prediction,
];

/** Counted once per request body: the router, the hold and every fallback's hold ask for the same figures. */
function countsOf(body: ChatCompletionRequest): Counts {
  const parts = countedParts(body);
  const seen = counted.get(body);
  if (seen?.parts.every((part, i) => part === parts[i])) return seen;
  const text = predictionText(body);
  const predicted = text === '' ? Promise.resolve(0) : countTextTokensAsync(text);
  const counts = { parts, input: countUncached(body, predicted), predicted };
  counted.set(body, counts);
  return counts;
}

/**
 * Messages, plus tool definitions (`functions` too) and a response schema, which providers bill as input, and a
 * predicted output: the provider may count it as input as well as bill what it rejects as output, so the hold
 * covers both.
 */
export function countInputTokens(body: ChatCompletionRequest): Promise<number> {
  return countsOf(body).input;
}

/** The tokens of a predicted output (0 without one): at worst all rejected, and billed as output per choice. */
export function countPredictedTokens(body: ChatCompletionRequest): Promise<number> {
  return countsOf(body).predicted;
}

async function countUncached(body: ChatCompletionRequest, predicted: Promise<number>): Promise<number> {
  const extras = [body.tools, body.functions, body.response_format].filter((part) => part !== undefined);
  const messages = await countChatInputTokensAsync(body.messages);
  const definitions = extras.length > 0 ? await countTextTokensAsync(JSON.stringify(extras)) : 0;
  return messages + definitions + (await predicted);
}

/**
 * Reserves the worst case before anything is dispatched: input tokens at the input price plus the output limit
 * (the client's, else the model's own) at the output price, at the rates of the tier the input count falls in. A
 * limit the caps cannot cover is refused with 402, unless the client opted in to having it lowered
 * (`x-gw-fit-output`, chat/output-hold.ts). `heldAt` prices the hold when the request may cost more per input
 * token than the model's input rate (cache writes: `inputAtCacheWriteRate`); the charge is `model`'s.
 */
export async function prepareChat(
  spending: Spending,
  context: Pick<CallContext, 'auth' | 'requestId' | 'tag' | 'log' | 'fitOutput' | 'tokenLimit'>,
  model: CatalogModel,
  body: ChatCompletionRequest,
  discount: Discount = 'none',
  heldAt: CatalogModel = model,
): Promise<PreparedChat> {
  const inputTokens = await countInputTokens(body);
  const predicted = await countPredictedTokens(body);
  const limit = checkRequest(model, body, inputTokens);
  // The output limit binds each choice; the input is billed once.
  const { hold, outputLimit, tokens } = await holdOutput(spending, context, {
    heldAt,
    discount,
    inputTokens,
    predicted,
    choices: choicesOf(body),
    limit,
  });
  return { model, inputTokens, outputLimit, hold, discount, ...(tokens && { tokens }) };
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
