import type { Hold, Spending } from '../billing/spending.ts';
import type { CatalogModel } from '../catalog/types.ts';
import type { Discount } from '../contracts/money.ts';
import { type FittedLimit, holdFitted } from '../pipeline/fitted.ts';
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
 * Holds a chat request's worst case, the input once and the output limit for every choice, as the pipeline holds
 * a limit it may fit (`pipeline/fitted.ts`: refused with what is affordable, lowered only for
 * `x-gw-fit-output: true`).
 */
export async function holdOutput(
  spending: Spending,
  context: Pick<CallContext, 'auth' | 'requestId' | 'tag' | 'log' | 'fitOutput' | 'tokenLimit'>,
  sizing: OutputSizing,
): Promise<OutputHold> {
  const { hold, limit, tokens } = await holdFitted(spending, context, outputLimit(sizing));
  return { hold, outputLimit: limit, ...(tokens && { tokens }) };
}

/** A chat request's output limit per choice as the pipeline fits it: priced by the chat pricing, held at `heldAt`. */
export function outputLimit(sizing: OutputSizing): FittedLimit {
  const { heldAt, discount, inputTokens, predicted, choices, limit } = sizing;
  const held = heldUsage(inputTokens, limit, choices, predicted);
  return {
    model: heldAt.id,
    limit,
    worstTokens: held.promptTokens + held.completionTokens,
    priced: (output) =>
      chatCharge(heldAt, heldUsage(inputTokens, output, choices, predicted), discount).chargedNanos,
    affordable: (nanos) =>
      affordableOutputTokens(heldAt, inputTokens, limit, nanos, discount, choices, predicted),
    refusal: (affordable, fit) => outputRefusal(limit, affordable, choices, fit),
    ...(sizing.ttlMs !== undefined && { ttlMs: sizing.ttlMs }),
  };
}

/**
 * The limit asked for and the most the room left would pay for, as OpenRouter words it ("You requested up to N
 * tokens, but can only afford M"), and the two ways on when some output fits.
 */
function outputRefusal(limit: number, affordable: number, choices: number, fit: boolean): string {
  const each = choices > 1 ? ` per choice (${choices} choices)` : '';
  const ways =
    fit || affordable < 1
      ? '.'
      : `: ask for ${affordable} or fewer, or send the header x-gw-fit-output: true to have the output limit lowered to what is affordable.`;
  return `You requested up to ${limit} output tokens${each}, but can only afford ${affordable}${ways}`;
}
