import type { KeyHolder } from '../accounts/live-state.ts';
import type { CatalogModel } from '../catalog/types.ts';
import { type PriceLine, priceCharge } from './charge.ts';
import type { Spending } from './spending.ts';

export interface MeteredOutcome<T> {
  result: T;
  /** What was used, priced from the catalog: the provider's figures, or the gateway's estimate. */
  lines: PriceLine[];
  usageReported: boolean;
  units: number;
}

/**
 * The two-phase shape every billable endpoint follows: hold the worst case before dispatch, run, settle what
 * was used (at most the hold; an overrun is recorded), release the hold if the call fails.
 */
export async function metered<T>(
  spending: Spending,
  auth: KeyHolder,
  request: { requestId: string; tag: string | null; model: CatalogModel; worstCase: PriceLine[] },
  run: () => Promise<MeteredOutcome<T>>,
): Promise<{ result: T; costNanos: bigint }> {
  const worst = priceCharge(request.worstCase).chargedNanos;
  const hold = await spending.reserve(auth, {
    requestId: request.requestId,
    tag: request.tag,
    minNanos: worst,
    maxNanos: worst,
  });
  let outcome: MeteredOutcome<T>;
  try {
    outcome = await run();
  } catch (error) {
    await spending.release(hold, 'failed');
    throw error;
  }
  const charge = priceCharge(outcome.lines);
  await spending.settle(hold, {
    actualNanos: charge.chargedNanos,
    model: request.model.id,
    provider: request.model.provider,
    charge,
    usageReported: outcome.usageReported,
    units: outcome.units,
  });
  return { result: outcome.result, costNanos: charge.chargedNanos };
}
