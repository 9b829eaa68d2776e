import { randomBytes } from 'node:crypto';
import type { KeyHolder } from '../accounts/live-state.ts';
import type { Hold, Spending } from '../billing/spending.ts';
import { type ChatModel, findChatModel } from '../catalog/local.ts';
import { ApiError } from '../http/errors.ts';
import { countChatInputTokens, countTextTokens } from '../tokens/count.ts';
import { affordableOutputTokens, chatCharge } from './pricing.ts';
import type { ChatCompletionRequest } from './request.ts';

/** Until the router exists, `auto` (and no model at all) means the built-in default. */
const DEFAULT_MODEL = 'local/echo';

export interface PreparedChat {
  model: ChatModel;
  inputTokens: number;
  /** The output limit sent upstream: the client's, or as much as the hold affords. */
  outputLimit: number;
  hold: Hold;
}

export function resolveModel(requested: string | undefined): ChatModel {
  const id =
    requested === undefined || requested === 'auto' || requested === 'auto/text' ? DEFAULT_MODEL : requested;
  const model = findChatModel(id);
  if (!model)
    throw new ApiError(404, 'model_not_found', `The model '${id}' does not exist or is not available`);
  return model;
}

/**
 * Reserves the worst case before anything is dispatched: input tokens at the input price plus the output limit
 * at the output price. With no limit from the client, the hold is as large as every cap allows up to the model's
 * own output limit, and that is the limit sent upstream, so a request is never refused only for lacking one.
 */
export async function prepareChat(
  spending: Spending,
  auth: KeyHolder,
  body: ChatCompletionRequest,
  requestId: string,
  tag: string | null,
): Promise<PreparedChat> {
  const model = resolveModel(body.model);
  const inputTokens = countChatInputTokens(body.messages);
  if (inputTokens > model.contextWindow) {
    throw new ApiError(
      400,
      'invalid_request_error',
      `'messages': ${inputTokens} input tokens exceed the context window of ${model.id} (${model.contextWindow})`,
    );
  }
  const requested = body.max_completion_tokens ?? body.max_tokens;
  if (requested !== undefined && requested > model.maxOutputTokens) {
    const field = body.max_completion_tokens === undefined ? 'max_tokens' : 'max_completion_tokens';
    throw new ApiError(
      400,
      'invalid_request_error',
      `'${field}': at most ${model.maxOutputTokens} for ${model.id}`,
    );
  }
  const worst = chatCharge(model, inputTokens, requested ?? model.maxOutputTokens).chargedNanos;
  const least = requested === undefined ? chatCharge(model, inputTokens, 1).chargedNanos : worst;
  const hold = await spending.reserve(auth, { requestId, tag, minNanos: least, maxNanos: worst });
  const outputLimit = requested ?? Math.max(1, affordableOutputTokens(model, inputTokens, hold.grantedNanos));
  return { model, inputTokens, outputLimit, hold };
}

/** Settles what was produced; usage the provider did not report is estimated, and the charge says so. */
export async function settleChat(
  spending: Spending,
  prepared: PreparedChat,
  usage: { promptTokens: number; completionTokens: number } | undefined,
  producedText: string,
): Promise<bigint> {
  const promptTokens = usage?.promptTokens ?? prepared.inputTokens;
  const completionTokens = usage?.completionTokens ?? countTextTokens(producedText);
  const charge = chatCharge(prepared.model, promptTokens, completionTokens);
  await spending.settle(prepared.hold, {
    actualNanos: charge.chargedNanos,
    model: prepared.model.id,
    provider: prepared.model.provider,
    charge,
    usageReported: usage !== undefined,
    units: promptTokens + completionTokens,
  });
  return charge.chargedNanos;
}

export function completionId(): string {
  return `chatcmpl-${randomBytes(12).toString('hex')}`;
}
