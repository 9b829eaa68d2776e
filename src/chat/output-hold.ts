import { type Hold, HoldRefused, type Spending } from '../billing/spending.ts';
import type { CatalogModel } from '../catalog/types.ts';
import type { Discount } from '../contracts/money.ts';
import { reserve } from '../pipeline/ledger.ts';
import type { AdmittedTokens, CallContext } from '../pipeline/types.ts';
import { affordableOutputTokens, chatCharge, heldUsage } from './pricing.ts';

/** What a chat hold is sized from. */
export interface OutputSizing {
  /** The rates the hold is priced at: the model's, or higher ones it may be billed at (cache writes, batch rates). */
  heldAt: CatalogModel;
  discount: Discount;
  inputTokens: number;
  /** The tokens of a predicted output, billed as output per choice when rejected. */
  predicted: number;
  choices: number;
  /** The output limit per choice: the client's, else the model's default. */
  limit: number;
  /** How long the hold lives unsettled, for work that outlives a request (a batch line). */
  ttlMs?: number;
}

export interface OutputHold {
  hold: Hold;
  /** The output limit sent upstream. */
  outputLimit: number;
  /** The worst case's tokens, when a tokens-per-minute limit admitted them (trued up when the call settles). */
  tokens?: AdmittedTokens;
}

/**
 * Holds a chat request's worst case: the input once and the output limit for every choice. A limit the caps cannot
 * cover is refused with the scope's 402 and the limit that would fit, never lowered behind the client's back: the
 * answer would come back cut (`finish_reason: "length"`) with nothing to say why. A client that opts in
 * (`x-gw-fit-output: true`) is held as much as the caps allow instead, down to one output token, and that is the
 * limit sent upstream.
 */
export async function holdOutput(
  spending: Spending,
  context: Pick<CallContext, 'auth' | 'requestId' | 'tag' | 'log' | 'fitOutput' | 'tokenLimit'>,
  sizing: OutputSizing,
): Promise<OutputHold> {
  const { heldAt, discount, inputTokens, predicted, choices, limit } = sizing;
  const priced = (output: number) =>
    chatCharge(heldAt, heldUsage(inputTokens, output, choices, predicted), discount).chargedNanos;
  const affordable = (nanos: bigint) =>
    affordableOutputTokens(heldAt, inputTokens, limit, nanos, discount, choices, predicted);
  const fit = context.fitOutput === true;
  const worst = priced(limit);
  // Tokens per minute count the tokens the hold is sized for, admitted first: a request they refuse holds nothing.
  const held = heldUsage(inputTokens, limit, choices, predicted);
  const tokens = await context.tokenLimit?.admit(held.promptTokens + held.completionTokens);
  const hold = await reserve(
    spending,
    context,
    {
      minNanos: fit ? priced(1) : worst,
      maxNanos: worst,
      ...(sizing.ttlMs !== undefined && { ttlMs: sizing.ttlMs }),
    },
    heldAt.id,
  ).catch(async (error: unknown) => {
    await tokens?.release();
    if (!(error instanceof HoldRefused)) throw error;
    throw outputRefusal(error, limit, affordable(error.availableNanos), choices, fit);
  });
  return {
    hold,
    outputLimit: fit ? Math.max(1, affordable(hold.grantedNanos)) : limit,
    ...(tokens && { tokens }),
  };
}

/**
 * The scope's refusal, with the output limit asked for and the most the room left would pay for, as OpenRouter
 * words it ("You requested up to N tokens, but can only afford M"), and the two ways on when some output fits.
 */
function outputRefusal(
  refused: HoldRefused,
  limit: number,
  affordable: number,
  choices: number,
  fit: boolean,
): HoldRefused {
  const each = choices > 1 ? ` per choice (${choices} choices)` : '';
  const ways =
    fit || affordable < 1
      ? '.'
      : `: ask for ${affordable} or fewer, or send the header x-gw-fit-output: true to have the output limit lowered to what is affordable.`;
  return new HoldRefused(
    refused.kind,
    `${refused.message} You requested up to ${limit} output tokens${each}, but can only afford ${affordable}${ways}`,
    refused.availableNanos,
  );
}
