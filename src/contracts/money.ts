/**
 * Charges, in integer nano-dollars. Unit prices are nano-dollars per million units (so that $0.15 per million
 * tokens is the integer 150,000,000); each line's cost is rounded up to a whole nano-dollar, the 5% platform
 * fee is rounded up, and a discount halves the total, rounding up. Rounding therefore never undercharges by
 * more than 3 nano-dollars per request and never invents more than that either. Worked examples: docs/billing.md.
 */

export const PLATFORM_FEE_PERCENT = 5n;
/**
 * `batch`: half the normal charge (a batch line served by the built-in models, which have no provider to pay).
 * `batch_api`: a line served through a provider's batch API, its lines already at the provider's batch rates, so
 * no further discount. `batch_fee`: a line of a provider without a batch API, served at full price, the batch
 * discount taken from the fee: half the normal charge, but never less than the pass-through (docs/batches.md).
 * `byok`: served with the client's own provider key, so the provider bills the client: only the fee is charged, the
 * pass-through kept as what the fee is reckoned on (docs/billing.md, Bring your own key).
 */
export const DISCOUNT_PERCENT = {
  none: 0n,
  cache: 50n,
  batch: 50n,
  batch_api: 0n,
  batch_fee: 50n,
  byok: 0n,
} as const;
export type Discount = keyof typeof DISCOUNT_PERCENT;

export interface PriceLine {
  /** What is counted: input_tokens, output_tokens, cached_input_tokens, images, audio_seconds, ... */
  item: string;
  quantity: number;
  /** Nano-dollars per 1,000,000 units. */
  unitPriceNanosPerMillion: bigint;
}

export interface Charge {
  lines: PriceLine[];
  passThroughNanos: bigint;
  feeNanos: bigint;
  discount: Discount;
  discountNanos: bigint;
  chargedNanos: bigint;
}

const MILLION = 1_000_000n;

export function ceilDiv(numerator: bigint, denominator: bigint): bigint {
  if (numerator <= 0n) return 0n;
  return (numerator + denominator - 1n) / denominator;
}

export function lineCost(line: PriceLine): bigint {
  if (!Number.isSafeInteger(line.quantity) || line.quantity < 0) {
    throw new Error(`quantity of ${line.item} must be a non-negative integer`);
  }
  return ceilDiv(BigInt(line.quantity) * line.unitPriceNanosPerMillion, MILLION);
}

export function priceCharge(lines: PriceLine[], discount: Discount = 'none'): Charge {
  const passThroughNanos = lines.reduce((sum, line) => sum + lineCost(line), 0n);
  const feeNanos = ceilDiv(passThroughNanos * PLATFORM_FEE_PERCENT, 100n);
  const normal = passThroughNanos + feeNanos;
  const discounted = ceilDiv(normal * (100n - DISCOUNT_PERCENT[discount]), 100n);
  // The fee absorbs a fallback batch line's discount only as far as it goes: the provider was paid in full.
  const chargedNanos =
    discount === 'byok'
      ? feeNanos
      : discount === 'batch_fee' && discounted < passThroughNanos
        ? passThroughNanos
        : discounted;
  return { lines, passThroughNanos, feeNanos, discount, discountNanos: normal - chargedNanos, chargedNanos };
}

/** Cents as the API reports them: a number, exact to the nano-dollar (7 decimal places). */
export function nanosToCents(nanos: bigint): number {
  return Number(nanos) / 1e7;
}

/** Dollars per million units (as price lists state them) to nano-dollars per million, exactly for decimal input. */
export function dollarsPerMillion(dollars: string): bigint {
  const match = /^(\d+)(?:\.(\d{1,9}))?$/.exec(dollars);
  if (!match) throw new Error(`not a price in dollars: ${dollars}`);
  return BigInt(match[1] as string) * 1_000_000_000n + BigInt((match[2] ?? '').padEnd(9, '0'));
}

/** The most whole units (at most `max`) whose cost fits in `nanos`: what a grant pays for (`costOf` grows with units). */
export function unitsCoveredBy(costOf: (units: number) => bigint, nanos: bigint, max: number): number {
  let low = 0;
  let high = max;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (costOf(middle) <= nanos) low = middle;
    else high = middle - 1;
  }
  return low;
}
