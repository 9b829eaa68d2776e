import type { BudgetEvent, HoldData } from '../../events/budget.ts';
import { logicalEvents } from '../../events/logical.ts';

export interface Hold {
  holdId: string;
  requestId: string;
  amountNanos: bigint;
  subAccountId: string | null;
  tag: string | null;
  expiresAt: string;
  /** A spend lease: headroom held for requests its instance admits in memory; carved holds draw it down. */
  lease?: true;
  /** The lease this hold was carved from. */
  leaseId?: string;
  /** A sub-account's own tag, kept for its analytics beside its scope `tag`. */
  label?: string;
  /** A sub-account's hold in its price (what its cap counts); absent: `amountNanos` (events/budget.ts). */
  priceNanos?: bigint;
  /** The price book it was priced at (a sub-account's hold): its settle is priced the same. */
  markupBasisPoints?: number;
  priceBookRevision?: number;
  day?: string;
}

/** What a hold counts against its sub-account's cap: its price, or its amount where it records none. */
export const priceOfHold = (hold: Hold): bigint => hold.priceNanos ?? hold.amountNanos;

export interface Pending {
  total: bigint;
  bySubAccount: Map<string, bigint>;
  byTag: Map<string, bigint>;
}

/**
 * One account's spending in one month, folded from its budget stream.
 *
 * Unlike the other deciders' states, this one is folded in place: it sits on the hot path of every request,
 * and copying its maps (the month's ended holds grow with every request) on each event would make a request's
 * cost grow with the month's traffic. Its one writer owns it and throws it away when an append fails.
 */
export interface BudgetState {
  opened: boolean;
  closed: boolean;
  accountId: string;
  month: string;
  /** Lifetime charges, including every month before this one. */
  lifetimeChargedNanos: bigint;
  /** Lifetime charges per sub-account, in its price. */
  subAccountCharged: Map<string, bigint>;
  /** This month's charges per sub-account, in its price (a monthly cap). */
  subAccountMonthCharged: Map<string, bigint>;
  /** Charges per sub-account and UTC day, in its price: this month's and the carried days of a week (renewing caps). */
  subAccountDayCharged: Map<string, Map<string, bigint>>;
  /** This month's charges per tag. */
  tagCharged: Map<string, bigint>;
  holds: Map<string, Hold>;
  /** Sums of the open holds, by scope, kept as holds open and end. */
  pending: Pending;
  /** How each ended hold ended: a repeated settle or release changes nothing. */
  ended: Map<string, 'settled' | 'released'>;
  /** Notifications already raised, so each fires once per crossing. */
  raised: Set<string>;
  /** Lifetime adjustments of the balance (credits less debits), carried from month to month. */
  adjustedNanos: bigint;
  /** Every adjustment ever made, by reference (carried): a reference, or a top-up's reversal, counts once. */
  adjustments: Map<string, Adjustment>;
}

export interface Adjustment {
  amountNanos: bigint;
  reason: string;
  /** The top-up reference a reversal gives back. */
  reverses?: string;
}

export function initialState(): BudgetState {
  return {
    opened: false,
    closed: false,
    accountId: '',
    month: '',
    lifetimeChargedNanos: 0n,
    subAccountCharged: new Map(),
    subAccountMonthCharged: new Map(),
    subAccountDayCharged: new Map(),
    tagCharged: new Map(),
    holds: new Map(),
    pending: { total: 0n, bySubAccount: new Map(), byTag: new Map() },
    ended: new Map(),
    raised: new Set(),
    adjustedNanos: 0n,
    adjustments: new Map(),
  };
}

export function toHold(data: HoldData): Hold {
  const { priceNanos, ...rest } = data;
  return {
    ...rest,
    amountNanos: BigInt(data.amountNanos),
    ...(priceNanos !== undefined && { priceNanos: BigInt(priceNanos) }),
  };
}

export function holdData(hold: Hold): HoldData {
  const { priceNanos, ...rest } = hold;
  return {
    ...rest,
    amountNanos: hold.amountNanos.toString(),
    ...(priceNanos !== undefined && { priceNanos: priceNanos.toString() }),
  };
}

function add(map: Map<string, bigint>, key: string | null, amount: bigint): void {
  if (key === null || amount === 0n) return;
  const next = (map.get(key) ?? 0n) + amount;
  if (next === 0n) map.delete(key);
  else map.set(key, next);
}

function open(state: BudgetState, hold: Hold): void {
  state.holds.set(hold.holdId, hold);
  state.pending.total += hold.amountNanos;
  add(state.pending.bySubAccount, hold.subAccountId, priceOfHold(hold));
  add(state.pending.byTag, hold.tag, hold.amountNanos);
}

function end(state: BudgetState, holdId: string, how: 'settled' | 'released'): void {
  const hold = state.holds.get(holdId);
  if (hold) {
    state.holds.delete(holdId);
    state.pending.total -= hold.amountNanos;
    add(state.pending.bySubAccount, hold.subAccountId, -priceOfHold(hold));
    add(state.pending.byTag, hold.tag, -hold.amountNanos);
  }
  state.ended.set(holdId, how);
}

/** A hold carved from a lease moves its amount (and its price) out of the lease: what is pending stays the same. */
function draw(state: BudgetState, leaseId: string, amount: bigint, price: bigint): void {
  const lease = state.holds.get(leaseId);
  if (!lease) return;
  lease.amountNanos -= amount;
  if (lease.priceNanos !== undefined) lease.priceNanos -= price;
  state.pending.total -= amount;
  add(state.pending.bySubAccount, lease.subAccountId, lease.priceNanos === undefined ? -amount : -price);
  add(state.pending.byTag, lease.tag, -amount);
}

/**
 * A charge posted in this month against the scopes of the hold it came from: its cost against the balance and the
 * tag, its price against the sub-account (and the day it counts in for a renewing cap).
 */
function charge(
  state: BudgetState,
  scopes: { subAccountId: string | null; tag: string | null; priceNanos?: string; day?: string },
  amount: bigint,
) {
  state.lifetimeChargedNanos += amount;
  add(state.tagCharged, scopes.tag, amount);
  const sub = scopes.subAccountId;
  if (sub === null) return;
  const price = scopes.priceNanos === undefined ? amount : BigInt(scopes.priceNanos);
  add(state.subAccountCharged, sub, price);
  add(state.subAccountMonthCharged, sub, price);
  if (scopes.day !== undefined) addDay(state, sub, scopes.day, price);
}

function addDay(state: BudgetState, subAccountId: string, day: string, amount: bigint): void {
  let days = state.subAccountDayCharged.get(subAccountId);
  if (!days) {
    days = new Map();
    state.subAccountDayCharged.set(subAccountId, days);
  }
  add(days, day, amount);
}

/** Folds a stored event: what it stands for, in order (a settlement may carry its hold and its request's record). */
export function evolve(state: BudgetState, event: BudgetEvent): BudgetState {
  let next = state;
  for (const part of logicalEvents(event)) next = evolveOne(next, part);
  return next;
}

function evolveOne(state: BudgetState, event: BudgetEvent): BudgetState {
  switch (event.type) {
    case 'BudgetMonthOpened':
      state.opened = true;
      state.accountId = event.data.accountId;
      state.month = event.data.month;
      state.lifetimeChargedNanos = BigInt(event.data.lifetimeChargedNanos);
      state.subAccountCharged = new Map(
        Object.entries(event.data.subAccountChargedNanos).map(([id, nanos]) => [id, BigInt(nanos)]),
      );
      for (const hold of event.data.openHolds) open(state, toHold(hold));
      for (const [sub, days] of Object.entries(event.data.subAccountDayChargedNanos ?? {}))
        for (const [day, nanos] of Object.entries(days)) addDay(state, sub, day, BigInt(nanos));
      state.adjustedNanos = BigInt(event.data.adjustedNanos ?? '0');
      state.adjustments = new Map(
        Object.entries(event.data.adjustments ?? {}).map(([reference, a]) => [
          reference,
          { ...a, amountNanos: BigInt(a.amountNanos) },
        ]),
      );
      return state;
    case 'BudgetMonthClosed':
      state.closed = true;
      return state;
    case 'SpendReserved':
      if (event.data.leaseId !== undefined)
        draw(
          state,
          event.data.leaseId,
          BigInt(event.data.amountNanos),
          BigInt(event.data.priceNanos ?? event.data.amountNanos),
        );
      open(state, toHold(event.data));
      return state;
    case 'SpendSettled':
      charge(state, event.data, BigInt(event.data.chargedNanos));
      end(state, event.data.holdId, 'settled');
      return state;
    case 'SpendOverrun':
      charge(state, event.data, BigInt(event.data.overrunNanos));
      return state;
    case 'SpendReleased':
      end(state, event.data.holdId, 'released');
      return state;
    case 'BalanceAdjusted': {
      const { reference, amountNanos, reason, reverses } = event.data;
      state.adjustedNanos += BigInt(amountNanos);
      state.adjustments.set(reference, {
        amountNanos: BigInt(amountNanos),
        reason,
        ...(reverses !== undefined && { reverses }),
      });
      return state;
    }
    case 'BalanceLowReached':
      state.raised.add('balance.low');
      return state;
    case 'BalanceExhausted':
      state.raised.add('balance.exhausted');
      return state;
    case 'TagUsageThresholdExceeded':
      state.raised.add(`tag:${event.data.tag}:${event.data.thresholdPercent}`);
      return state;
    case 'SubAccountSpendExceeded':
      state.raised.add(subAccountNotice(event.data.subAccountId, event.data.periodStart));
      return state;
    case 'RequestCompleted':
      return state;
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}

/**
 * What the account was given to spend: its top-ups less refunds (from its own stream, resolved by the caller) and
 * the adjustments this stream decided.
 */
export function creditsOf(state: BudgetState, toppedUpNanos: bigint): bigint {
  return toppedUpNanos + state.adjustedNanos;
}

/** What a sub-account's cap notice is remembered by: once per month, or once per period of a renewing cap. */
export const subAccountNotice = (subAccountId: string, periodStart: string | undefined) =>
  periodStart === undefined ? `subaccount:${subAccountId}` : `subaccount:${subAccountId}:${periodStart}`;

/** Sums of the open holds, by scope. */
export function pending(state: BudgetState): Pending {
  return state.pending;
}
