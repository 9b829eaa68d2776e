import type { z } from 'zod';
import type { BudgetEvent, ChargeDetail } from '../../events/budget.ts';
import type { RequestRecord } from '../../events/request.ts';
import { refusalNotices, thresholdNotices } from './notices.ts';
import { type BudgetState, type Hold, holdData, pending, toHold } from './state.ts';

export interface Carried {
  lifetimeChargedNanos: bigint;
  subAccountChargedNanos: ReadonlyMap<string, bigint>;
  openHolds: Hold[];
}

/** Caps and balances known outside this stream, resolved by the caller before the command is built. */
export interface Limits {
  /** Lifetime top-ups of the account. Top-ups only grow, so a slightly stale figure errs on the safe side. */
  toppedUpNanos: bigint;
  balanceLowThresholdNanos: bigint;
  subAccount: { id: string; capNanos: bigint } | null;
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
  | { type: 'ExpireHolds'; now: Date };

export type ReserveCommand = Extract<BudgetCommand, { type: 'Reserve' }>;

export class MonthUnavailable extends Error {
  override readonly name = 'MonthUnavailable';
  constructor(readonly state: 'not_opened' | 'closed') {
    super(`budget month ${state === 'closed' ? 'is closed' : 'is not opened'}`);
  }
}

export interface Headroom {
  scope: 'account' | 'sub_account' | 'tag';
  remainingNanos: bigint;
  capNanos: bigint;
  spentNanos: bigint;
}

/** What each scope still allows: its limit minus what is posted and what is held. */
export function headrooms(state: BudgetState, limits: Limits): Headroom[] {
  const held = pending(state);
  const spentTotal = state.lifetimeChargedNanos;
  const result: Headroom[] = [
    {
      scope: 'account',
      remainingNanos: limits.toppedUpNanos - spentTotal - held.total,
      capNanos: limits.toppedUpNanos,
      spentNanos: spentTotal,
    },
  ];
  if (limits.subAccount) {
    const spent = state.subAccountCharged.get(limits.subAccount.id) ?? 0n;
    result.push({
      scope: 'sub_account',
      remainingNanos:
        limits.subAccount.capNanos - spent - (held.bySubAccount.get(limits.subAccount.id) ?? 0n),
      capNanos: limits.subAccount.capNanos,
      spentNanos: spent,
    });
  }
  if (limits.tag && limits.tag.capNanos !== null) {
    const spent = state.tagCharged.get(limits.tag.name) ?? 0n;
    result.push({
      scope: 'tag',
      remainingNanos: limits.tag.capNanos - spent - (held.byTag.get(limits.tag.name) ?? 0n),
      capNanos: limits.tag.capNanos,
      spentNanos: spent,
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
          },
        },
      ];
    case 'Reserve': {
      requireOpen(state);
      if (state.holds.has(command.holdId) || state.ended.has(command.holdId)) return [];
      const carved = carve(command, state);
      if (carved) return [carved];
      const tightest = binding(state, command.limits);
      // A call that cannot cost anything (a free model) is held at zero whatever the caps say.
      const granted = command.maxNanos === 0n ? 0n : min(command.maxNanos, tightest.remainingNanos);
      const refused = command.maxNanos > 0n && (granted < command.minNanos || granted <= 0n);
      if (refused) return refusalNotices(state, command.limits, tightest);
      return [
        {
          type: 'SpendReserved',
          data: {
            accountId: state.accountId,
            month: state.month,
            holdId: command.holdId,
            requestId: command.requestId,
            amountNanos: granted.toString(),
            subAccountId: command.limits.subAccount?.id ?? null,
            tag: command.limits.tag?.name ?? null,
            expiresAt: command.expiresAt,
            ...labelOf(command.limits.label),
          },
        },
      ];
    }
    case 'Lease': {
      requireOpen(state);
      if (state.holds.has(command.leaseId) || state.ended.has(command.leaseId)) return [];
      // A quarter of what is left at most, so that near a cap leases shrink below what a request needs and
      // requests fall back to holds of their own; however many instances lease, none holds the last of a cap.
      const share = binding(state, command.limits).remainingNanos / LEASE_SHARE_OF_HEADROOM;
      const granted = min(command.wantNanos, share);
      if (granted < command.minNanos || granted <= 0n) return [];
      return [
        {
          type: 'SpendReserved',
          data: {
            accountId: state.accountId,
            month: state.month,
            holdId: command.leaseId,
            requestId: command.leaseId,
            amountNanos: granted.toString(),
            subAccountId: command.limits.subAccount?.id ?? null,
            tag: command.limits.tag?.name ?? null,
            expiresAt: command.expiresAt,
            lease: true,
          },
        },
      ];
    }
    case 'Settle': {
      requireOpen(state);
      const unseen = !state.holds.has(command.holdId) && !state.ended.has(command.holdId);
      const carved = command.carve && unseen ? carve(command.carve, state) : undefined;
      if (carved?.type !== 'SpendReserved') return settle(command, state);
      return [carved, ...settle(command, state, toHold(carved.data))];
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
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
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
    lease.tag === (command.limits.tag?.name ?? null);
  if (!lease || !sameScopes || lease.amountNanos < command.maxNanos) return undefined;
  return {
    type: 'SpendReserved',
    data: {
      accountId: state.accountId,
      month: state.month,
      holdId: command.holdId,
      requestId: command.requestId,
      amountNanos: command.maxNanos.toString(),
      subAccountId: lease.subAccountId,
      tag: lease.tag,
      expiresAt: command.expiresAt,
      leaseId: command.leaseId,
      ...labelOf(command.limits.label),
    },
  };
}

/** A settled request's record: its month, and the budget it spent when its own tag is a label beside that. */
function logRecord(
  request: RequestRecord,
  month: string,
  scopes: { tag: string | null; label?: string },
): Extract<BudgetEvent, { type: 'RequestCompleted' }>['data'] {
  return { ...request, month, ...(scopes.label !== undefined && { budgetTag: scopes.tag }) };
}

/** The label field of a hold or charge: present only when there is one, so events without stay as they were. */
function labelOf(label: string | undefined): { label?: string } {
  return label === undefined ? {} : { label };
}

function settle(
  command: Extract<BudgetCommand, { type: 'Settle' }>,
  state: BudgetState,
  carved?: Hold,
): BudgetEvent[] {
  if (state.ended.get(command.holdId) === 'settled') return [];
  // A settle for a hold that was released or expired still charges: the provider billed it.
  const hold = state.holds.get(command.holdId) ?? carved;
  const heldNanos = hold?.amountNanos ?? 0n;
  const chargedNanos = min(command.actualNanos, heldNanos);
  const scopes = {
    subAccountId: hold?.subAccountId ?? command.limits.subAccount?.id ?? null,
    tag: hold?.tag ?? command.limits.tag?.name ?? null,
    ...labelOf(hold ? hold.label : command.limits.label),
  };
  const common = {
    accountId: state.accountId,
    month: state.month,
    holdId: command.holdId,
    requestId: command.requestId,
    ...scopes,
  };
  const events: BudgetEvent[] = [
    {
      type: 'SpendSettled',
      data: {
        ...common,
        heldNanos: heldNanos.toString(),
        chargedNanos: chargedNanos.toString(),
        releasedNanos: (heldNanos - chargedNanos).toString(),
        charge: command.charge,
      },
    },
  ];
  const overrun = command.actualNanos - chargedNanos;
  if (overrun > 0n)
    events.push({
      type: 'SpendOverrun',
      data: { ...common, overrunNanos: overrun.toString(), model: command.charge.model },
    });
  const logged: BudgetEvent[] = command.request
    ? [{ type: 'RequestCompleted', data: logRecord(command.request, state.month, scopes) }]
    : [];
  return [...events, ...thresholdNotices(state, events, command.limits), ...logged];
}

/**
 * The hold is granted only when every scope has room for the whole amount (caps apply as to any request), and
 * settled at once against it, so the charge reads as any other: one hold reserved once and ended once.
 */
function chargeKnown(command: Extract<BudgetCommand, { type: 'Charge' }>, state: BudgetState): BudgetEvent[] {
  if (state.holds.has(command.holdId) || state.ended.has(command.holdId)) return [];
  const tightest = binding(state, command.limits);
  if (command.chargedNanos > 0n && tightest.remainingNanos < command.chargedNanos)
    return refusalNotices(state, command.limits, tightest);
  const reserved = {
    type: 'SpendReserved' as const,
    data: {
      accountId: state.accountId,
      month: state.month,
      holdId: command.holdId,
      requestId: command.requestId,
      amountNanos: command.chargedNanos.toString(),
      subAccountId: command.limits.subAccount?.id ?? null,
      tag: command.limits.tag?.name ?? null,
      expiresAt: command.expiresAt,
      ...labelOf(command.limits.label),
    },
  };
  const settled: BudgetEvent = {
    type: 'SpendSettled',
    data: {
      accountId: state.accountId,
      month: state.month,
      holdId: command.holdId,
      requestId: command.requestId,
      subAccountId: reserved.data.subAccountId,
      tag: reserved.data.tag,
      ...labelOf(command.limits.label),
      heldNanos: command.chargedNanos.toString(),
      chargedNanos: command.chargedNanos.toString(),
      releasedNanos: '0',
      charge: command.charge,
    },
  };
  const logged: BudgetEvent[] = command.request
    ? [{ type: 'RequestCompleted', data: logRecord(command.request, state.month, reserved.data) }]
    : [];
  return [reserved, settled, ...thresholdNotices(state, [settled], command.limits), ...logged];
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
