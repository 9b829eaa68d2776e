import { DomainError } from '../../commands/errors.ts';
import { accountStream } from '../../events/account.ts';
import { budgetStream, monthOf, nextMonth, previousMonth } from '../../events/budget.ts';
import type { StoredEvent } from '../../events/envelope.ts';
import { parseEvent } from '../../events/index.ts';
import type { EventStore } from '../../events/store.ts';
import { toBalance } from '../billing/balance.ts';

const PAGE = 1000;

export interface BalanceAt {
  account_id: string;
  at: string;
  cents: number;
  usd: number;
  nanos: string;
  topped_up_nanos: string;
  adjusted_nanos: string;
  charged_nanos: string;
}

async function* readStream(store: EventStore, stream: string): AsyncIterable<StoredEvent> {
  for (let from = 0; ; ) {
    const page = await store.readStream(stream, { fromRevision: from, maxCount: PAGE });
    yield* page;
    const last = page[page.length - 1];
    if (!last || page.length < PAGE) return;
    from = last.revision + 1;
  }
}

/**
 * The balance as it stood at an instant, from the log alone: top-ups less refunds, plus the operator's adjustments,
 * less charges (settled and overrun) that
 * occurred at or before it. Budget months are read from the one before the account's opening (clocks differ
 * by a little between instances) to the one after the instant's (a charge may be booked to the next month
 * a moment before its time).
 */
export async function balanceAt(
  store: EventStore,
  accountId: string,
  at: Date,
  now = new Date(),
): Promise<BalanceAt> {
  let openedAt: Date | undefined;
  let toppedUp = 0n;
  const references = new Set<string>();
  for await (const stored of readStream(store, accountStream(accountId))) {
    const parsed = parseEvent(stored);
    if (!parsed.ok) continue;
    const event = parsed.event;
    if (event.type === 'AccountOpened') openedAt = stored.occurredAt;
    // A reference credits once, as in the balances read model.
    if (
      event.type === 'AccountToppedUp' &&
      stored.occurredAt <= at &&
      !references.has(event.data.reference)
    ) {
      references.add(event.data.reference);
      toppedUp += BigInt(event.data.amountNanos);
    }
    if (event.type === 'AccountTopUpReversed' && stored.occurredAt <= at)
      toppedUp -= BigInt(event.data.amountNanos);
  }
  if (!openedAt) throw new DomainError('not_found', `account ${accountId} not found`, 'account');

  let charged = 0n;
  let adjusted = 0n;
  const last = nextMonth(monthOf(at < now ? at : now));
  for (let month = previousMonth(monthOf(openedAt)); month <= last; month = nextMonth(month)) {
    for await (const stored of readStream(store, budgetStream(accountId, month))) {
      if (stored.occurredAt > at) continue;
      const parsed = parseEvent(stored);
      if (!parsed.ok) continue;
      if (parsed.event.type === 'SpendSettled') charged += BigInt(parsed.event.data.chargedNanos);
      if (parsed.event.type === 'SpendOverrun') charged += BigInt(parsed.event.data.overrunNanos);
      if (parsed.event.type === 'BalanceAdjusted') adjusted += BigInt(parsed.event.data.amountNanos);
    }
  }
  const nanos = toppedUp + adjusted - charged;
  return {
    account_id: accountId,
    at: at.toISOString(),
    ...toBalance(nanos),
    nanos: nanos.toString(),
    topped_up_nanos: toppedUp.toString(),
    adjusted_nanos: adjusted.toString(),
    charged_nanos: charged.toString(),
  };
}
