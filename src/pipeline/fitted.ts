import { type Hold, HoldRefused, type Spending } from '../billing/spending.ts';
import { reserve } from './ledger.ts';
import type { AdmittedTokens, CallContext } from './types.ts';

/**
 * A hold sized by a limit on some unit the client asks for (a chat request's output tokens per choice). A limit
 * the caps cannot cover is refused with the scope's 402 and the most units that would fit, never lowered behind
 * the client's back: the answer would come back cut with nothing to say why. A client that opts in
 * (`x-gw-fit-output: true`) is held as much as the caps allow instead, down to one unit, and the limit that hold
 * pays for is the one to send upstream. The feature supplies data and pure functions: the price of a hold for so
 * many units, the most units an amount pays for, and the words of its refusal.
 */
export interface FittedLimit {
  /** The catalog id of the model the hold is for. */
  model: string;
  /** The units asked for: the worst case held. */
  limit: number;
  /** The worst case in tokens, for the caller's tokens-per-minute limit; absent when the units are not tokens. */
  worstTokens?: number;
  /** What a hold for `units` costs, in nano-dollars. */
  priced(units: number): bigint;
  /** The most units (at most `limit`) whose hold `nanos` pays for; 0 when not one does. */
  affordable(nanos: bigint): number;
  /**
   * What the client is told after the scope's refusal: the limit asked for and the `affordable` units the room
   * left pays for; `fit` when the client had asked for the limit to be lowered.
   */
  refusal(affordable: number, fit: boolean): string;
  /** How long the hold lives unsettled, for work that outlives a request (a batch line). */
  ttlMs?: number;
}

export interface FittedHold {
  hold: Hold;
  /** The limit to send upstream: the one asked for, or, fitted, what the hold pays for. */
  limit: number;
  /** The worst case's tokens, when a tokens-per-minute limit admitted them (trued up when the call settles). */
  tokens?: AdmittedTokens;
}

/**
 * Admits the worst case's tokens, then holds the worst case (fitted: anything from one unit's price up to it); a
 * refused hold gives the admitted tokens back and is thrown with the feature's words.
 */
export async function holdFitted(
  spending: Spending,
  context: Pick<CallContext, 'auth' | 'requestId' | 'tag' | 'log' | 'fitOutput' | 'tokenLimit'>,
  sized: FittedLimit,
): Promise<FittedHold> {
  const fit = context.fitOutput === true;
  const worst = sized.priced(sized.limit);
  // Tokens per minute count the tokens the hold is sized for, admitted first: a request they refuse holds nothing.
  const tokens =
    sized.worstTokens === undefined ? undefined : await context.tokenLimit?.admit(sized.worstTokens);
  const amount = {
    minNanos: fit ? sized.priced(1) : worst,
    maxNanos: worst,
    ...(sized.ttlMs !== undefined && { ttlMs: sized.ttlMs }),
  };
  const hold = await reserve(spending, context, amount, sized.model).catch(async (error: unknown) => {
    await tokens?.release();
    if (!(error instanceof HoldRefused)) throw error;
    const affordable = sized.affordable(error.availableNanos);
    throw new HoldRefused(
      error.kind,
      `${error.message} ${sized.refusal(affordable, fit)}`,
      error.availableNanos,
    );
  });
  return {
    hold,
    limit: fit ? Math.max(1, sized.affordable(hold.grantedNanos)) : sized.limit,
    ...(tokens && { tokens }),
  };
}
