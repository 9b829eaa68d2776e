import type { BudgetEvent } from './budget.ts';
import type { GatewayEvent } from './index.ts';

/**
 * The events a stored event stands for. A served request is stored as one event: its `SpendSettled` carries the
 * hold it settles when that hold was never stored on its own (carved in memory from a spend lease, or a charge
 * known before serving) and the request's record, so that the request costs one event, one hash, one row. Every
 * reader that folds events (the budget decider, the read models, the audit) folds what it stands for: the hold's
 * `SpendReserved`, the `SpendSettled`, the `RequestCompleted`, in that order, as older code stored them apart.
 */
export function logicalEvents<E extends GatewayEvent>(event: E): E[] {
  if (event.type !== 'SpendSettled') return [event];
  const { reserved, request, ...settled } = (event as Extract<BudgetEvent, { type: 'SpendSettled' }>).data;
  if (reserved === undefined && request === undefined) return [event];
  const parts: BudgetEvent[] = [];
  if (reserved !== undefined)
    parts.push({
      type: 'SpendReserved',
      data: {
        accountId: settled.accountId,
        month: settled.month,
        holdId: settled.holdId,
        requestId: settled.requestId,
        amountNanos: settled.heldNanos,
        subAccountId: settled.subAccountId,
        tag: settled.tag,
        ...(settled.label !== undefined && { label: settled.label }),
        ...reserved,
      },
    });
  parts.push({ type: 'SpendSettled', data: settled });
  if (request !== undefined) parts.push({ type: 'RequestCompleted', data: request });
  return parts as E[];
}

/** The stored types that may stand for more than themselves: a reader that folds none of their parts skips them. */
export const compositeTypes: ReadonlySet<string> = new Set(['SpendSettled']);
