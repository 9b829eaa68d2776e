import type { Spending } from '../billing/spending.ts';
import { eachRate, mapTokenRates } from '../catalog/tiers.ts';
import type { CatalogModel } from '../catalog/types.ts';
import { affordableOutputTokens, chatCharge, heldUsage } from '../chat/pricing.ts';
import type { ChatCompletionRequest } from '../chat/request.ts';
import { checkRequest, choicesOf, countInputTokens, countPredictedTokens } from '../chat/service.ts';
import { reserve } from '../pipeline/ledger.ts';
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
 * Holds a line's worst case at the batch rates, as a chat request is held (chat/service.ts `prepareChat`): the
 * input, and the output limit for every choice; without a limit from the client, as much as the caps allow up to
 * the model's own. Refusals (a limit the model does not have, no room under a cap) are thrown as they would be.
 */
export async function holdLine(
  spending: Spending,
  context: Pick<CallContext, 'auth' | 'requestId' | 'tag'>,
  standard: CatalogModel,
  body: ChatCompletionRequest,
): Promise<{ hold: Awaited<ReturnType<typeof reserve>>; outputLimit: number }> {
  const model = atBatchRates(standard);
  const inputTokens = await countInputTokens(body);
  const predicted = await countPredictedTokens(body);
  const limit = checkRequest(model, body, inputTokens);
  const requested = body.max_completion_tokens ?? body.max_tokens;
  const choices = choicesOf(body);
  const priced = (output: number) =>
    chatCharge(model, heldUsage(inputTokens, output, choices, predicted), 'batch_api').chargedNanos;
  const worst = priced(requested ?? limit);
  const least = requested === undefined ? priced(1) : worst;
  const hold = await reserve(spending, context, {
    minNanos: least,
    maxNanos: worst,
    ttlMs: UPSTREAM_LINE_HOLD_TTL_MS,
  });
  const outputLimit =
    requested ??
    Math.max(
      1,
      affordableOutputTokens(model, inputTokens, limit, hold.grantedNanos, 'batch_api', choices, predicted),
    );
  return { hold, outputLimit };
}
