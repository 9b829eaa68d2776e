import type { BudgetEvent, HoldData } from '../../events/budget.ts';
import type { RequestRecord } from '../../events/request.ts';
import { type BudgetCommand, binding, type Limits } from './decide.ts';
import { refusalNotices, thresholdNotices } from './notices.ts';
import { chargeBook, pricedTotal, resoldCharge, resoldHold } from './resold.ts';
import { type BudgetState, toHold } from './state.ts';

// The budget decider's charges: a hold settled at what the provider billed (posted up to the hold, the rest an
// overrun), and a charge known before serving (a cached answer), each in the account's money and, for a
// sub-account, in its price (docs/billing.md, Reselling).

/** A settled request's record: its month, and the budget it spent when its own tag is a label beside that. */
function logRecord(
  request: RequestRecord,
  month: string,
  scopes: { tag: string | null; label?: string },
  /** What the request was charged in the requester's money, where that is a sub-account's price. */
  costNanos?: bigint,
): Extract<BudgetEvent, { type: 'RequestCompleted' }>['data'] {
  return {
    ...request,
    month,
    ...(scopes.label !== undefined && { budgetTag: scopes.tag }),
    ...(costNanos !== undefined && { costNanos: costNanos.toString() }),
  };
}

/** The label field of a hold or charge: present only when there is one, so events without stay as they were. */
export function labelOf(label: string | undefined): { label?: string } {
  return label === undefined ? {} : { label };
}

type Reserved = Extract<BudgetEvent, { type: 'SpendReserved' }>;

/**
 * A hold of `amountNanos` under the scopes of `limits`, as every grant records it (a request's own hold, a lease, a
 * carve out of a lease, a known charge's): a lease covers many requests' tags as one, so it records no label.
 */
export function reservedEvent(
  state: Pick<BudgetState, 'accountId' | 'month'>,
  hold: { holdId: string; requestId: string; expiresAt: string } & ({ lease: true } | { leaseId?: string }),
  limits: Limits,
  amountNanos: bigint,
): Reserved {
  return {
    type: 'SpendReserved',
    data: {
      accountId: state.accountId,
      month: state.month,
      holdId: hold.holdId,
      requestId: hold.requestId,
      amountNanos: amountNanos.toString(),
      subAccountId: limits.subAccount?.id ?? null,
      tag: limits.tag?.name ?? null,
      expiresAt: hold.expiresAt,
      ...('lease' in hold ? { lease: true } : labelOf(limits.label)),
      ...('leaseId' in hold && hold.leaseId !== undefined && { leaseId: hold.leaseId }),
      ...resoldHold(limits, amountNanos),
    },
  };
}

/**
 * Settles a hold. `carved` is a hold carved from a lease that was never stored: the settlement carries it
 * (`reserved`), and the request's record, so that the served request is one event.
 */
export function settle(
  command: Extract<BudgetCommand, { type: 'Settle' }>,
  state: BudgetState,
  carved?: HoldData,
): BudgetEvent[] {
  if (state.ended.get(command.holdId) === 'settled') return [];
  // A settle for a hold that was released or expired still charges: the provider billed it.
  const hold = state.holds.get(command.holdId) ?? (carved && toHold(carved));
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
  const overrun = command.actualNanos - chargedNanos;
  const book = chargeBook(hold, command.limits);
  const resold = resoldCharge(scopes.subAccountId, book, command.limits, chargedNanos, overrun);
  const events: BudgetEvent[] = [
    {
      type: 'SpendSettled',
      data: {
        ...common,
        heldNanos: heldNanos.toString(),
        chargedNanos: chargedNanos.toString(),
        releasedNanos: (heldNanos - chargedNanos).toString(),
        charge: command.charge,
        ...resold.settled,
        ...(carved && { reserved: reservedPart(carved) }),
      },
    },
  ];
  if (overrun > 0n)
    events.push({
      type: 'SpendOverrun',
      data: { ...common, overrunNanos: overrun.toString(), model: command.charge.model, ...resold.overrun },
    });
  const cost =
    book && scopes.subAccountId ? (command.loggedBeforeNanos ?? 0n) + pricedTotal(events) : undefined;
  const settled = events[0] as Extract<BudgetEvent, { type: 'SpendSettled' }>;
  if (command.request) settled.data.request = logRecord(command.request, state.month, scopes, cost);
  return [...events, ...thresholdNotices(state, events, command.limits)];
}

/** A hold's fields beyond those of the settlement that carries it. */
function reservedPart(hold: HoldData): NonNullable<SettledData['reserved']> {
  const { expiresAt, leaseId, priceNanos, markupBasisPoints, priceBookRevision, day } = hold;
  return {
    expiresAt,
    ...(leaseId !== undefined && { leaseId }),
    ...(priceNanos !== undefined && { priceNanos }),
    ...(markupBasisPoints !== undefined && { markupBasisPoints }),
    ...(priceBookRevision !== undefined && { priceBookRevision }),
    ...(day !== undefined && { day }),
  };
}

type SettledData = Extract<BudgetEvent, { type: 'SpendSettled' }>['data'];

/**
 * The hold is granted only when every scope has room for the whole amount (caps apply as to any request), and
 * settled at once against it, so the charge reads as any other: one hold reserved once and ended once.
 */
export function chargeKnown(
  command: Extract<BudgetCommand, { type: 'Charge' }>,
  state: BudgetState,
): BudgetEvent[] {
  if (state.holds.has(command.holdId) || state.ended.has(command.holdId)) return [];
  const tightest = binding(state, command.limits);
  if (command.chargedNanos > 0n && tightest.remainingNanos < command.chargedNanos)
    return refusalNotices(state, command.limits, tightest);
  const reserved = reservedEvent(state, command, command.limits, command.chargedNanos);
  const book = command.limits.subAccount?.price;
  const resold = resoldCharge(reserved.data.subAccountId, book, command.limits, command.chargedNanos, 0n);
  const settled: Extract<BudgetEvent, { type: 'SpendSettled' }> = {
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
      ...resold.settled,
    },
  };
  const cost = book && reserved.data.subAccountId ? pricedTotal([settled]) : undefined;
  // One event: the settlement carries its hold and the request's record (events/logical.ts).
  settled.data.reserved = reservedPart(reserved.data);
  if (command.request) settled.data.request = logRecord(command.request, state.month, reserved.data, cost);
  return [settled, ...thresholdNotices(state, [settled], command.limits)];
}

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
