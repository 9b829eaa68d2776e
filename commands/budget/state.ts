import type { BudgetEvent, HoldData } from '../../events/budget.ts';

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
}

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
  /** Lifetime charges per sub-account. */
  subAccountCharged: Map<string, bigint>;
  /** This month's charges per tag. */
  tagCharged: Map<string, bigint>;
  holds: Map<string, Hold>;
  /** Sums of the open holds, by scope, kept as holds open and end. */
  pending: Pending;
  /** How each ended hold ended: a repeated settle or release changes nothing. */
  ended: Map<string, 'settled' | 'released'>;
  /** Notifications already raised, so each fires once per crossing. */
  raised: Set<string>;
}

export function initialState(): BudgetState {
  return {
    opened: false,
    closed: false,
    accountId: '',
    month: '',
    lifetimeChargedNanos: 0n,
    subAccountCharged: new Map(),
    tagCharged: new Map(),
    holds: new Map(),
    pending: { total: 0n, bySubAccount: new Map(), byTag: new Map() },
    ended: new Map(),
    raised: new Set(),
  };
}

export function toHold(data: HoldData): Hold {
  return { ...data, amountNanos: BigInt(data.amountNanos) };
}

export function holdData(hold: Hold): HoldData {
  return { ...hold, amountNanos: hold.amountNanos.toString() };
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
  add(state.pending.bySubAccount, hold.subAccountId, hold.amountNanos);
  add(state.pending.byTag, hold.tag, hold.amountNanos);
}

function end(state: BudgetState, holdId: string, how: 'settled' | 'released'): void {
  const hold = state.holds.get(holdId);
  if (hold) {
    state.holds.delete(holdId);
    state.pending.total -= hold.amountNanos;
    add(state.pending.bySubAccount, hold.subAccountId, -hold.amountNanos);
    add(state.pending.byTag, hold.tag, -hold.amountNanos);
  }
  state.ended.set(holdId, how);
}

/** A hold carved from a lease moves its amount out of the lease: what is pending stays the same. */
function draw(state: BudgetState, leaseId: string, amount: bigint): void {
  const lease = state.holds.get(leaseId);
  if (!lease) return;
  lease.amountNanos -= amount;
  state.pending.total -= amount;
  add(state.pending.bySubAccount, lease.subAccountId, -amount);
  add(state.pending.byTag, lease.tag, -amount);
}

/** A charge posted in this month against the scopes of the hold it came from. */
function charge(
  state: BudgetState,
  scopes: { subAccountId: string | null; tag: string | null },
  amount: bigint,
) {
  state.lifetimeChargedNanos += amount;
  add(state.subAccountCharged, scopes.subAccountId, amount);
  add(state.tagCharged, scopes.tag, amount);
}

export function evolve(state: BudgetState, event: BudgetEvent): BudgetState {
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
      return state;
    case 'BudgetMonthClosed':
      state.closed = true;
      return state;
    case 'SpendReserved':
      if (event.data.leaseId !== undefined) draw(state, event.data.leaseId, BigInt(event.data.amountNanos));
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
      state.raised.add(`subaccount:${event.data.subAccountId}`);
      return state;
    case 'RequestCompleted':
      return state;
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}

/** Sums of the open holds, by scope. */
export function pending(state: BudgetState): Pending {
  return state.pending;
}
