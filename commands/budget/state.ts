import type { BudgetEvent, HoldData } from '../../events/budget.ts';

export interface Hold {
  holdId: string;
  requestId: string;
  amountNanos: bigint;
  subAccountId: string | null;
  tag: string | null;
  expiresAt: string;
}

/** One account's spending in one month, folded from its budget stream. */
export interface BudgetState {
  opened: boolean;
  closed: boolean;
  accountId: string;
  month: string;
  /** Lifetime charges, including every month before this one. */
  lifetimeChargedNanos: bigint;
  /** Lifetime charges per sub-account. */
  subAccountCharged: ReadonlyMap<string, bigint>;
  /** This month's charges per tag. */
  tagCharged: ReadonlyMap<string, bigint>;
  holds: ReadonlyMap<string, Hold>;
  /** How each ended hold ended: a repeated settle or release changes nothing. */
  ended: ReadonlyMap<string, 'settled' | 'released'>;
  /** Notifications already raised, so each fires once per crossing. */
  raised: ReadonlySet<string>;
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

function add(
  map: ReadonlyMap<string, bigint>,
  key: string | null,
  amount: bigint,
): ReadonlyMap<string, bigint> {
  if (key === null || amount === 0n) return map;
  return new Map(map).set(key, (map.get(key) ?? 0n) + amount);
}

function without<K, V>(map: ReadonlyMap<K, V>, key: K): ReadonlyMap<K, V> {
  const next = new Map(map);
  next.delete(key);
  return next;
}

/** A charge posted in this month against the scopes of the hold it came from. */
function charge(
  state: BudgetState,
  hold: { subAccountId: string | null; tag: string | null },
  amount: bigint,
) {
  return {
    lifetimeChargedNanos: state.lifetimeChargedNanos + amount,
    subAccountCharged: add(state.subAccountCharged, hold.subAccountId, amount),
    tagCharged: add(state.tagCharged, hold.tag, amount),
  };
}

export function evolve(state: BudgetState, event: BudgetEvent): BudgetState {
  switch (event.type) {
    case 'BudgetMonthOpened':
      return {
        ...state,
        opened: true,
        accountId: event.data.accountId,
        month: event.data.month,
        lifetimeChargedNanos: BigInt(event.data.lifetimeChargedNanos),
        subAccountCharged: new Map(
          Object.entries(event.data.subAccountChargedNanos).map(([id, nanos]) => [id, BigInt(nanos)]),
        ),
        holds: new Map(event.data.openHolds.map((h) => [h.holdId, toHold(h)])),
      };
    case 'BudgetMonthClosed':
      return { ...state, closed: true };
    case 'SpendReserved':
      return { ...state, holds: new Map(state.holds).set(event.data.holdId, toHold(event.data)) };
    case 'SpendSettled':
      return {
        ...state,
        ...charge(state, event.data, BigInt(event.data.chargedNanos)),
        holds: without(state.holds, event.data.holdId),
        ended: new Map(state.ended).set(event.data.holdId, 'settled'),
      };
    case 'SpendOverrun':
      return { ...state, ...charge(state, event.data, BigInt(event.data.overrunNanos)) };
    case 'SpendReleased':
      return {
        ...state,
        holds: without(state.holds, event.data.holdId),
        ended: new Map(state.ended).set(event.data.holdId, 'released'),
      };
    case 'BalanceLowReached':
      return { ...state, raised: new Set(state.raised).add('balance.low') };
    case 'BalanceExhausted':
      return { ...state, raised: new Set(state.raised).add('balance.exhausted') };
    case 'TagUsageThresholdExceeded':
      return {
        ...state,
        raised: new Set(state.raised).add(`tag:${event.data.tag}:${event.data.thresholdPercent}`),
      };
    case 'SubAccountSpendExceeded':
      return { ...state, raised: new Set(state.raised).add(`subaccount:${event.data.subAccountId}`) };
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}

/** Sums of the open holds, by scope. */
export function pending(state: BudgetState) {
  let total = 0n;
  const bySubAccount = new Map<string, bigint>();
  const byTag = new Map<string, bigint>();
  for (const hold of state.holds.values()) {
    total += hold.amountNanos;
    if (hold.subAccountId)
      bySubAccount.set(hold.subAccountId, (bySubAccount.get(hold.subAccountId) ?? 0n) + hold.amountNanos);
    if (hold.tag) byTag.set(hold.tag, (byTag.get(hold.tag) ?? 0n) + hold.amountNanos);
  }
  return { total, bySubAccount, byTag };
}
