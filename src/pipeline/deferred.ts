import type { KeyHolder } from '../accounts/live-state.ts';
import type { Hold, Spending } from '../billing/spending.ts';
import type { CatalogModel } from '../catalog/types.ts';
import { type PriceLine, priceCharge } from '../contracts/money.ts';
import { release, reserve, settle } from './ledger.ts';
import { ownKeyBill, ownKeyName } from './own-key.ts';
import type { Bill, CallContext } from './types.ts';

/**
 * A call whose result arrives later: a job the provider renders for minutes after the request, followed by a worker
 * of any instance, perhaps after a restart. Its money is the pipeline's as a served call's is: the worst case held
 * when the work is queued, the hold recorded with the work; settled at what the provider delivered, released when
 * it fails, and a cancellation charged as the provider bills it (docs/jobs.md, Cancelling). The feature supplies
 * data and pure functions: the model, the price lines of a number of units, the units it holds and delivered.
 */

/** A deferred call's hold outlives any provider's render time and the worker's retries. */
export const DEFERRED_HOLD_TTL_MS = 48 * 3600 * 1000;

/** What the work runs on, and what `units` of it cost there (the feature's pure pricing rule). */
export interface DeferredWork {
  model: CatalogModel;
  lines(units: number): PriceLine[];
}

/**
 * A deferred call's hold as its work recorded it, from which any instance settles or releases it later. Its
 * scopes are read afresh for the requester (a cap changed since applies), with the price book of `model`.
 */
export interface RecordedHold {
  holdId: string;
  requestId: string;
  /** What was granted, in nano-dollars, as a decimal string (as events carry it). */
  heldNanos: string;
  accountId: string;
  subAccountId: string | null;
  keyId: string;
  tag: string | null;
  model?: string;
}

/** What the provider delivered: its units, whether it reported them, and the credential the work went out on. */
export interface Delivered {
  units: number;
  usageReported: boolean;
  credential?: string | undefined;
}

/**
 * How a cancelled deferred call is charged: nothing before hand-off (`before_handoff`) or when the provider never
 * took the work (`not_taken`); the held worst case when the provider has the work and reports nothing once asked
 * to stop (`hold`, `units` being those held); what it delivered (`provider_output`).
 */
export type Cancellation =
  | { basis: 'before_handoff' }
  | { basis: 'not_taken' }
  | { basis: 'hold'; work: DeferredWork; units: number; credential?: string | undefined }
  | ({ basis: 'provider_output'; work: DeferredWork } & Delivered);

/**
 * Holds the work's worst case (`heldUnits` at the full price, whatever key it runs on later) for two days, and
 * records the work with the hold; a failure to record releases it.
 */
export async function queueDeferred<T>(
  spending: Spending,
  context: Pick<CallContext, 'auth' | 'requestId' | 'tag' | 'log'>,
  work: DeferredWork,
  heldUnits: number,
  record: (hold: Hold) => Promise<T>,
): Promise<T> {
  const worst = priceCharge(work.lines(heldUnits)).chargedNanos;
  const hold = await reserve(
    spending,
    context,
    { minNanos: worst, maxNanos: worst, ttlMs: DEFERRED_HOLD_TTL_MS },
    work.model.id,
  );
  try {
    return await record(hold);
  } catch (error) {
    await release(spending, hold, 'failed');
    throw error;
  }
}

/**
 * Records work whose holds were made one by one beforehand (a provider batch's lines, each refused alone); a failure
 * to record releases them all, as a failure's. A release that fails too is left to the hold's expiry.
 */
export async function recordHeld<T>(spending: Spending, holds: Hold[], record: () => Promise<T>): Promise<T> {
  try {
    return await record();
  } catch (error) {
    for (const hold of holds) await release(spending, hold, 'failed').catch(() => undefined);
    throw error;
  }
}

/** Settles the hold at what the provider delivered; resolves with the charge in the requester's money. */
export function settleDeferred(
  spending: Spending,
  recorded: RecordedHold,
  work: DeferredWork,
  delivered: Delivered,
): Promise<bigint> {
  const bill = billOf(work, delivered);
  return settle(spending, heldFor(spending, recorded), work.model, bill);
}

/** Releases the hold of work that failed (or, `cancelled`, was never handed over). */
export function releaseDeferred(
  spending: Spending,
  recorded: RecordedHold,
  reason: 'failed' | 'cancelled',
): Promise<void> {
  return release(spending, heldFor(spending, recorded), reason);
}

/** Settles or releases a cancelled call's hold as the cancellation says: what was charged, and for how many units. */
export async function chargeCancelled(
  spending: Spending,
  recorded: RecordedHold,
  cancellation: Cancellation,
): Promise<{ chargedNanos: bigint; units: number }> {
  if (cancellation.basis === 'before_handoff' || cancellation.basis === 'not_taken') {
    await releaseDeferred(spending, recorded, 'cancelled');
    return { chargedNanos: 0n, units: 0 };
  }
  const { work, units, credential } = cancellation;
  const usageReported = cancellation.basis === 'provider_output' && cancellation.usageReported;
  const delivered = { units, usageReported, ...(credential !== undefined && { credential }) };
  return { chargedNanos: await settleDeferred(spending, recorded, work, delivered), units };
}

/**
 * The bill of delivered units on the credential that served them: on the requester's own key the provider bills
 * the requester, so the charge is the platform fee alone (the pass-through kept as what the fee is reckoned on).
 */
function billOf(work: DeferredWork, delivered: Delivered): Bill {
  const { units, usageReported, credential } = delivered;
  return onCredential({ charge: priceCharge(work.lines(units)), usageReported, units }, credential);
}

/** The bill as charged on the credential that served it: the fee alone on the requester's own key. */
export function onCredential(bill: Bill, credential: string | undefined): Bill {
  const served = { ...bill, ...(credential !== undefined && { credential }) };
  return ownKeyName(credential) === undefined ? served : ownKeyBill(served);
}

/** Who the recorded hold is for, as the ledger and the request log name a requester. */
export function holderOf(recorded: RecordedHold): KeyHolder {
  return {
    keyId: recorded.keyId,
    accountId: recorded.accountId,
    keyHash: '',
    subAccountId: recorded.subAccountId,
  };
}

/** The recorded hold as the ledger knows it, with the scopes it is charged against now. */
export function heldFor(spending: Spending, recorded: RecordedHold): Hold {
  return {
    holdId: recorded.holdId,
    requestId: recorded.requestId,
    grantedNanos: BigInt(recorded.heldNanos),
    accountId: recorded.accountId,
    limits: spending.limits(holderOf(recorded), recorded.tag, recorded.model),
  };
}
