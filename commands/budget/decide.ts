import type { z } from 'zod';
import type { AdjustmentRecord, BudgetEvent, ChargeDetail } from '../../events/budget.ts';
import type { RequestRecord } from '../../events/request.ts';
import { type AdjustCommand, decideAdjust } from './adjust.ts';
import { chargeKnown, reservedEvent, settle } from './charges.ts';
import type { PriceBook } from './markup.ts';
import { refusalNotices } from './notices.ts';
import type { CapReset } from './periods.ts';
import { carriedDays, carriedDaysData, holdPrice, subAccountHeadroom, todayOf } from './resold.ts';
import {
  type Adjustment,
  type BudgetState,
  creditsOf,
  type Hold,
  holdData,
  pending,
  priceOfHold,
} from './state.ts';

export interface Carried {
  lifetimeChargedNanos: bigint;
  subAccountChargedNanos: ReadonlyMap<string, bigint>;
  openHolds: Hold[];
  adjustedNanos?: bigint;
  adjustments?: ReadonlyMap<string, Adjustment>;
  /** A sub-account's spending per day of a week that runs on into the new month (renewing caps). */
  subAccountDayChargedNanos?: ReadonlyMap<string, ReadonlyMap<string, bigint>>;
}

/** Caps and balances known outside this stream, resolved by the caller before the command is built. */
export interface Limits {
  /** Lifetime top-ups of the account. Top-ups only grow, so a slightly stale figure errs on the safe side. */
  toppedUpNanos: bigint;
  balanceLowThresholdNanos: bigint;
  /**
   * A sub-account's cap, in its price, over its period (`reset`, null or absent: for life), and the price book in
   * force for the request's model (absent: no markup, and its holds record no price).
   */
  subAccount: { id: string; capNanos: bigint; reset?: CapReset; price?: PriceBook } | null;
  /** The UTC day (`YYYY-MM-DD`) the command is decided on, by the caller's clock: a renewing cap's period. */
  today?: string;
  /** The tag whose budget the request spends: for a sub-account, its default tag whatever tag it sent. */
  tag: { name: string; capNanos: bigint | null } | null;
  /** The tag a sub-account sent when it is not its scope: recorded on its holds and charges, never a budget. */
  label?: string;
}

export type BudgetCommand =
  | { type: 'OpenMonth'; accountId: string; month: string; carried: Carried }
  | { type: 'CloseMonth' }
  | {
      type: 'Reserve';
      holdId: string;
      requestId: string;
      /** The hold is granted between these: as much as the scopes allow, up to the worst case. */
      minNanos: bigint;
      maxNanos: bigint;
      expiresAt: string;
      limits: Limits;
      /** Carve the hold out of this lease (of the same scopes) when it has room; else decide it as any hold. */
      leaseId?: string;
    }
  | {
      /** A spend lease: up to `wantNanos` of the scopes' headroom, at least `minNanos`, or nothing. */
      type: 'Lease';
      leaseId: string;
      wantNanos: bigint;
      minNanos: bigint;
      expiresAt: string;
      limits: Limits;
    }
  | {
      type: 'Settle';
      holdId: string;
      requestId: string;
      actualNanos: bigint;
      charge: z.infer<typeof ChargeDetail>;
      limits: Limits;
      /** The request's record, appended with its settlement (the request log costs no append of its own). */
      request?: RequestRecord;
      /**
       * For a hold admitted under a lease: its carving, decided first if it was never stored (its append failed),
       * so the settle always finds the hold it settles.
       */
      carve?: ReserveCommand;
      /**
       * What the request's earlier holds charged it, in its own money (a realtime stream's slices): its record's
       * cost is that plus what this settlement charges it.
       */
      loggedBeforeNanos?: bigint;
    }
  | {
      /** A charge whose amount is known before serving (a cached answer): held and settled in one append. */
      type: 'Charge';
      holdId: string;
      requestId: string;
      charge: z.infer<typeof ChargeDetail>;
      chargedNanos: bigint;
      expiresAt: string;
      limits: Limits;
      request?: RequestRecord;
    }
  | { type: 'LogRequest'; request: RequestRecord }
  | { type: 'Release'; holdId: string; reason: 'failed' | 'cancelled' | 'returned' }
  | { type: 'ExpireHolds'; now: Date }
  | AdjustCommand;

export type ReserveCommand = Extract<BudgetCommand, { type: 'Reserve' }>;

export class MonthUnavailable extends Error {
  override readonly name = 'MonthUnavailable';
  constructor(readonly state: 'not_opened' | 'closed') {
    super(`budget month ${state === 'closed' ? 'is closed' : 'is not opened'}`);
  }
}

export interface Headroom {
  scope: 'account' | 'sub_account' | 'tag';
  /** What the scope still allows the account to pay (a sub-account's room in its price, turned into its cost). */
  remainingNanos: bigint;
  /** The scope's own figures, in its own money: a sub-account's in its price. */
  capNanos: bigint;
  spentNanos: bigint;
  heldNanos: bigint;
  /** A sub-account's markup, to state what a request needs in its price. */
  markupBasisPoints?: number;
  /** A renewing cap's period: its first day and when it ends. */
  period?: { reset: Exclude<CapReset, null>; start: string; endsAt: string };
}

/** What each scope still allows: its limit minus what is posted and what is held. */
export function headrooms(state: BudgetState, limits: Limits): Headroom[] {
  const held = pending(state);
  const spentTotal = state.lifetimeChargedNanos;
  const credits = creditsOf(state, limits.toppedUpNanos);
  const result: Headroom[] = [
    {
      scope: 'account',
      remainingNanos: credits - spentTotal - held.total,
      capNanos: credits,
      spentNanos: spentTotal,
      heldNanos: held.total,
    },
  ];
  if (limits.subAccount) result.push(subAccountHeadroom(state, limits.subAccount, todayOf(state, limits)));
  if (limits.tag && limits.tag.capNanos !== null) {
    const spent = state.tagCharged.get(limits.tag.name) ?? 0n;
    const tagHeld = held.byTag.get(limits.tag.name) ?? 0n;
    result.push({
      scope: 'tag',
      remainingNanos: limits.tag.capNanos - spent - tagHeld,
      capNanos: limits.tag.capNanos,
      spentNanos: spent,
      heldNanos: tagHeld,
    });
  }
  return result;
}

/** What open spend leases hold within a scope: headroom their instances give back when they stop using it. */
export function leasedIn(state: BudgetState, limits: Limits, scope: Headroom['scope']): bigint {
  let leased = 0n;
  for (const hold of state.holds.values()) {
    if (!hold.lease) continue;
    if (scope === 'sub_account' && hold.subAccountId !== limits.subAccount?.id) continue;
    if (scope === 'tag' && hold.tag !== limits.tag?.name) continue;
    leased += hold.amountNanos;
  }
  return leased;
}

/** The scope that binds tightest. */
export function binding(state: BudgetState, limits: Limits): Headroom {
  return headrooms(state, limits).reduce((a, b) => (b.remainingNanos < a.remainingNanos ? b : a));
}

export function decide(command: BudgetCommand, state: BudgetState): BudgetEvent[] {
  switch (command.type) {
    case 'OpenMonth':
      if (state.opened) return [];
      return [
        {
          type: 'BudgetMonthOpened',
          data: {
            accountId: command.accountId,
            month: command.month,
            lifetimeChargedNanos: command.carried.lifetimeChargedNanos.toString(),
            subAccountChargedNanos: Object.fromEntries(
              [...command.carried.subAccountChargedNanos].map(([id, n]) => [id, n.toString()]),
            ),
            openHolds: command.carried.openHolds.map(holdData),
            ...carriedAdjustments(command.carried.adjustedNanos, command.carried.adjustments),
            ...carriedDaysData(command.carried.subAccountDayChargedNanos),
          },
        },
      ];
    case 'CloseMonth':
      if (!state.opened || state.closed) return [];
      return [
        {
          type: 'BudgetMonthClosed',
          data: {
            accountId: state.accountId,
            month: state.month,
            lifetimeChargedNanos: state.lifetimeChargedNanos.toString(),
            subAccountChargedNanos: Object.fromEntries(
              [...state.subAccountCharged].map(([id, n]) => [id, n.toString()]),
            ),
            openHolds: [...state.holds.values()].map(holdData),
            ...carriedAdjustments(state.adjustedNanos, state.adjustments),
            ...carriedDaysData(carriedDays(state)),
          },
        },
      ];
    case 'Reserve': {
      requireOpen(state);
      if (state.holds.has(command.holdId) || state.ended.has(command.holdId)) return [];
      const carved = carve(command, state);
      if (carved) return [carved];
      return reserveAlone(command, state);
    }
    case 'Lease': {
      requireOpen(state);
      if (state.holds.has(command.leaseId) || state.ended.has(command.leaseId)) return [];
      // A quarter of what is left at most, so that near a cap leases shrink below what a request needs and
      // requests fall back to holds of their own; however many instances lease, none holds the last of a cap.
      const share = binding(state, command.limits).remainingNanos / LEASE_SHARE_OF_HEADROOM;
      const granted = min(command.wantNanos, share);
      if (granted < command.minNanos || granted <= 0n) return [];
      const lease = { holdId: command.leaseId, requestId: command.leaseId, expiresAt: command.expiresAt };
      return [reservedEvent(state, { ...lease, lease: true }, command.limits, granted)];
    }
    case 'Settle': {
      requireOpen(state);
      const unseen = !state.holds.has(command.holdId) && !state.ended.has(command.holdId);
      if (!command.carve || !unseen) return settle(command, state);
      // Its carve, decided now; a lease that can no longer cover it (gone, or short) leaves it to be held on its own,
      // as a reservation's carve is, and only a hold the scopes refuse too is charged as an overrun of none.
      const carved =
        carve(command.carve, state) ??
        reserveAlone(command.carve, state).find((e) => e.type === 'SpendReserved');
      return carved?.type === 'SpendReserved' ? settle(command, state, carved.data) : settle(command, state);
    }
    case 'Charge':
      requireOpen(state);
      return chargeKnown(command, state);
    case 'LogRequest':
      requireOpen(state);
      return [{ type: 'RequestCompleted', data: { ...command.request, month: state.month } }];
    case 'Release': {
      requireOpen(state);
      const hold = state.holds.get(command.holdId);
      if (!hold) return [];
      return [released(state, hold, command.reason)];
    }
    case 'ExpireHolds': {
      requireOpen(state);
      const now = command.now.toISOString();
      return [...state.holds.values()]
        .filter((h) => h.expiresAt <= now)
        .map((h) => released(state, h, 'expired'));
    }
    case 'Adjust':
      requireOpen(state);
      return decideAdjust(command, state);
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
}

/** A month's adjustments as carried: absent for an account that has none, so its months read as before. */
function carriedAdjustments(
  adjustedNanos: bigint | undefined,
  adjustments: ReadonlyMap<string, Adjustment> | undefined,
): { adjustedNanos?: string; adjustments?: Record<string, z.infer<typeof AdjustmentRecord>> } {
  if (!adjustments || adjustments.size === 0) return {};
  return {
    adjustedNanos: (adjustedNanos ?? 0n).toString(),
    adjustments: Object.fromEntries(
      [...adjustments].map(([reference, a]) => [
        reference,
        {
          amountNanos: a.amountNanos.toString(),
          reason: a.reason,
          ...(a.reverses !== undefined && { reverses: a.reverses }),
        },
      ]),
    ),
  };
}

/** A hold decided on its own against every scope: as much as they allow up to the worst case, or a refusal. */
function reserveAlone(command: ReserveCommand, state: BudgetState): BudgetEvent[] {
  const tightest = binding(state, command.limits);
  // A call that cannot cost anything (a free model) is held at zero whatever the caps say.
  const granted = command.maxNanos === 0n ? 0n : min(command.maxNanos, tightest.remainingNanos);
  const refused = command.maxNanos > 0n && (granted < command.minNanos || granted <= 0n);
  if (refused) return refusalNotices(state, command.limits, tightest);
  // Held apart from any lease it came with: the lease could not cover it.
  const own = { holdId: command.holdId, requestId: command.requestId, expiresAt: command.expiresAt };
  return [reservedEvent(state, own, command.limits, granted)];
}

/** Leases grant at most this fraction (1/n) of the tightest scope's headroom. */
export const LEASE_SHARE_OF_HEADROOM = 4n;

/** A hold admitted in memory under a lease: its whole amount out of the lease, which holds it for it. */
function carve(command: ReserveCommand, state: BudgetState): BudgetEvent | undefined {
  if (command.leaseId === undefined) return undefined;
  const lease = state.holds.get(command.leaseId);
  const sameScopes =
    lease?.lease === true &&
    lease.subAccountId === (command.limits.subAccount?.id ?? null) &&
    lease.tag === (command.limits.tag?.name ?? null) &&
    lease.markupBasisPoints === command.limits.subAccount?.price?.markupBasisPoints;
  if (!lease || !sameScopes || lease.amountNanos < command.maxNanos) return undefined;
  // A sub-account's lease holds a price too: each carve's price rounds up on its own, so both must fit.
  if (priceOfHold(lease) < holdPrice(command.limits, command.maxNanos)) return undefined;
  return reservedEvent(state, command, command.limits, command.maxNanos);
}

function released(
  state: BudgetState,
  hold: Hold,
  reason: 'failed' | 'cancelled' | 'expired' | 'returned',
): BudgetEvent {
  return {
    type: 'SpendReleased',
    data: {
      accountId: state.accountId,
      month: state.month,
      holdId: hold.holdId,
      amountNanos: hold.amountNanos.toString(),
      reason,
    },
  };
}

function requireOpen(state: BudgetState): void {
  if (!state.opened) throw new MonthUnavailable('not_opened');
  if (state.closed) throw new MonthUnavailable('closed');
}

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
