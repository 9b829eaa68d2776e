import type { Hold, Spending } from '../billing/spending.ts';
import type { CatalogModel } from '../catalog/types.ts';
import type { Bill, CallContext } from './types.ts';

/**
 * The pipeline's three ledger steps, shared by every billable path (chat, the modalities, jobs, batch lines and
 * realtime's slices): hold before dispatch, settle what was used (at most the hold; an overrun is recorded),
 * release when nothing was served.
 */
export function reserve(
  spending: Spending,
  context: Pick<CallContext, 'auth' | 'requestId' | 'tag' | 'log'>,
  amount: { minNanos: bigint; maxNanos: bigint; ttlMs?: number },
): Promise<Hold> {
  return spending.reserve(context.auth, {
    requestId: context.requestId,
    tag: context.tag,
    minNanos: amount.minNanos,
    maxNanos: amount.maxNanos,
    ...(amount.ttlMs === undefined ? {} : { ttlMs: amount.ttlMs }),
    ...(context.log && { log: context.log }),
  });
}

/** Settles the hold at the bill's charge; resolves with what was charged once it is durable. */
export async function settle(
  spending: Spending,
  hold: Hold,
  model: CatalogModel,
  bill: Bill,
  loggedNanos?: bigint,
): Promise<bigint> {
  await spending.settle(hold, {
    ...(loggedNanos !== undefined && { loggedNanos }),
    actualNanos: bill.charge.chargedNanos,
    model: model.id,
    provider: model.provider,
    charge: bill.charge,
    usageReported: bill.usageReported,
    units: bill.units,
  });
  return bill.charge.chargedNanos;
}

export function release(spending: Spending, hold: Hold, reason: Parameters<Spending['release']>[1]) {
  return spending.release(hold, reason);
}
