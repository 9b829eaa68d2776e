import { permitModel } from '../accounts/model-access.ts';
import type { Hold, Spending } from '../billing/spending.ts';
import type { CatalogModel } from '../catalog/types.ts';
import type { Bill, CallContext } from './types.ts';

/**
 * The pipeline's three ledger steps, shared by every billable path (chat, the modalities, jobs, batch lines and
 * realtime's slices): hold before dispatch, settle what was used (at most the hold; an overrun is recorded),
 * release when nothing was served.
 *
 * Nothing is held for a model the key may not use (its sub-account's `allowed_models`): the features refuse it
 * first, naming it as the client did; this is the one check no path around them can miss.
 */
export async function reserve(
  spending: Spending,
  context: Pick<CallContext, 'auth' | 'requestId' | 'tag' | 'log'>,
  amount: { minNanos: bigint; maxNanos: bigint; ttlMs?: number },
  /** The catalog id of the model the hold is for. */
  model: string,
): Promise<Hold> {
  permitModel(spending.allowedModels(context.auth), model);
  return spending.reserve(context.auth, {
    requestId: context.requestId,
    tag: context.tag,
    minNanos: amount.minNanos,
    maxNanos: amount.maxNanos,
    ...(amount.ttlMs === undefined ? {} : { ttlMs: amount.ttlMs }),
    ...(context.log && { log: context.log }),
    model,
  });
}

/**
 * Settles the hold at the bill's charge; resolves, once it is durable, with what the request was charged in its
 * requester's money (a sub-account's price: what its X-Cost-Cents, usage and records show).
 */
export function settle(
  spending: Spending,
  hold: Hold,
  model: CatalogModel,
  bill: Bill,
  loggedNanos?: bigint,
): Promise<bigint> {
  return spending.settle(hold, {
    ...(loggedNanos !== undefined && { loggedNanos }),
    actualNanos: bill.charge.chargedNanos,
    model: model.id,
    provider: model.provider,
    ...(bill.credential && { credential: bill.credential }),
    charge: bill.charge,
    usageReported: bill.usageReported,
    units: bill.units,
  });
}

export function release(spending: Spending, hold: Hold, reason: Parameters<Spending['release']>[1]) {
  return spending.release(hold, reason);
}
