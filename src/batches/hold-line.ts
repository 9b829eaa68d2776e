import type { Spending } from '../billing/spending.ts';
import { eachRate, mapTokenRates } from '../catalog/tiers.ts';
import type { CatalogModel } from '../catalog/types.ts';
import { holdOutput, type OutputHold } from '../chat/output-hold.ts';
import type { ChatCompletionRequest } from '../chat/request.ts';
import { checkRequest, choicesOf, countInputTokens, countPredictedTokens } from '../chat/service.ts';
import type { CallContext } from '../pipeline/types.ts';

/**
 * A line's hold lives until its upstream batch ends: the provider's 24-hour window, a day's margin for polling
 * and restarts. Held on its own, not under a spend lease, like a job's.
 */
export const UPSTREAM_LINE_HOLD_TTL_MS = 48 * 3600 * 1000;

/** The batch rate of one per-token price: half the standard rate, rounded up to a whole nano-dollar per million. */
const half = (price: bigint | null) => (price === null ? null : (price + 1n) / 2n);

/**
 * The model at its provider's batch rates. The price list (genai-prices) carries no batch rates, only notes that
 * OpenAI's, Anthropic's and Google's batch APIs bill half the standard rates for input, cached input, cache
 * writes and output; so each per-token rate is halved.
 */
export function atBatchRates(model: CatalogModel): CatalogModel {
  // A tier's rates too: the batch APIs halve the long-context rates as they do the base ones.
  return { ...model, prices: mapTokenRates(model.prices, eachRate(half)) };
}

/**
 * Holds a line's worst case at the batch rates, as a chat request is held (chat/output-hold.ts): the input, and the
 * output limit (the line's, else the model's) for every choice. A line has no header to opt in to a lowered limit,
 * so one whose limit its caps cannot cover is refused as a request would be (402, with what it could afford).
 * Refusals (a limit the model does not have, no room under a cap) are thrown as they would be.
 */
export async function holdLine(
  spending: Spending,
  context: Pick<CallContext, 'auth' | 'requestId' | 'tag'>,
  standard: CatalogModel,
  body: ChatCompletionRequest,
): Promise<OutputHold> {
  const model = atBatchRates(standard);
  const inputTokens = await countInputTokens(body);
  const predicted = await countPredictedTokens(body);
  return holdOutput(spending, context, {
    heldAt: model,
    discount: 'batch_api',
    inputTokens,
    predicted,
    choices: choicesOf(body),
    limit: checkRequest(model, body, inputTokens),
    ttlMs: UPSTREAM_LINE_HOLD_TTL_MS,
  });
}
