/**
 * A sub-account's price: what its account pays (the pass-through, the 5% fee, any cache or batch discount) times
 * (1 + markup), the markup in hundredths of a percent. One rounding, up to a whole nano-dollar, on the customer's
 * side, as every rounding of a charge goes (docs/billing.md, Reselling); the margin is the price less the cost, so it
 * is never negative and never a float.
 */

/** Hundredths of a percent in a whole: a markup of 3,000 (30%) prices a cost at 13,000 / 10,000 of it. */
const WHOLE = 10_000n;

/** The price book in force when a hold was made, recorded in it: a settle after a change uses it still. */
export interface PriceBook {
  markupBasisPoints: number;
  /** The sub-account stream's revision this price book was read at (what the audit re-derives it from). */
  revision: number;
}

/** The customer's price of what the account pays: ⌈cost × (10,000 + markup) / 10,000⌉. */
export function customerPrice(costNanos: bigint, markupBasisPoints: number): bigint {
  if (costNanos <= 0n || markupBasisPoints === 0) return costNanos;
  const scaled = costNanos * (WHOLE + BigInt(markupBasisPoints));
  return (scaled + WHOLE - 1n) / WHOLE;
}

/**
 * The most the account may pay for a request whose price must stay within `priceNanos`: the exact inverse of
 * `customerPrice`, so that a cap in the customer's money binds a hold sized in the account's.
 */
export function costWithin(priceNanos: bigint, markupBasisPoints: number): bigint {
  if (priceNanos <= 0n || markupBasisPoints === 0) return priceNanos;
  return (priceNanos * WHOLE) / (WHOLE + BigInt(markupBasisPoints));
}
