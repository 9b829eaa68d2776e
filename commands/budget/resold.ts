import type { BudgetEvent } from '../../events/budget.ts';
import type { Headroom, Limits } from './decide.ts';
import { costWithin, customerPrice, type PriceBook } from './markup.ts';
import { type CapReset, firstCarriedDay, inPeriod, periodEnd, periodStart } from './periods.ts';
import type { BudgetState, Hold } from './state.ts';

// A sub-account is its account's customer (docs/billing.md, Reselling): its holds and charges carry two amounts,
// what the account pays (against the balance and the tag budgets, which are the account's own) and the customer's
// price (against the sub-account's spend cap, for life or per UTC period). Decisions compare scopes in the account's
// money: the sub-account's room in its price is turned into the most the account may pay for it.

type SubAccountLimits = NonNullable<Limits['subAccount']>;

/** The day a command is decided on: the caller's, else (old commands, tests) the month's first. */
export const todayOf = (state: BudgetState, limits: Limits): string => limits.today ?? `${state.month}-01`;

/** What a sub-account has spent, in its price, in the period its cap counts: for life, this month, week or day. */
export function periodSpent(
  state: BudgetState,
  subAccountId: string,
  reset: CapReset,
  today: string,
): bigint {
  if (reset === null) return state.subAccountCharged.get(subAccountId) ?? 0n;
  if (reset === 'monthly') return state.subAccountMonthCharged.get(subAccountId) ?? 0n;
  let spent = 0n;
  for (const [day, nanos] of state.subAccountDayCharged.get(subAccountId) ?? []) {
    if (inPeriod(reset, day, today)) spent += nanos;
  }
  return spent;
}

/** The sub-account's scope: its cap less what it spent this period and what it holds, all in its price. */
export function subAccountHeadroom(state: BudgetState, sub: SubAccountLimits, today: string): Headroom {
  const reset = sub.reset ?? null;
  const spent = periodSpent(state, sub.id, reset, today);
  const held = state.pending.bySubAccount.get(sub.id) ?? 0n;
  const markup = sub.price?.markupBasisPoints ?? 0;
  // A monthly cap renews with the budget stream's month, which is the boundary its spending is kept in.
  const day = reset === 'monthly' ? `${state.month}-01` : today;
  const start = periodStart(reset, day);
  return {
    scope: 'sub_account',
    remainingNanos: costWithin(sub.capNanos - spent - held, markup),
    capNanos: sub.capNanos,
    spentNanos: spent,
    heldNanos: held,
    markupBasisPoints: markup,
    ...(reset !== null &&
      start !== null && {
        period: { reset, start, endsAt: (periodEnd(reset, day) as Date).toISOString() },
      }),
  };
}

/** What a hold of `amountNanos` records beside it for a sub-account: its price, price book and day. */
export function resoldHold(
  limits: Limits,
  amountNanos: bigint,
): { priceNanos?: string; markupBasisPoints?: number; priceBookRevision?: number; day?: string } {
  const sub = limits.subAccount;
  if (!sub) return {};
  return {
    ...(sub.price && {
      priceNanos: customerPrice(amountNanos, sub.price.markupBasisPoints).toString(),
      markupBasisPoints: sub.price.markupBasisPoints,
      priceBookRevision: sub.price.revision,
    }),
    ...(limits.today !== undefined && { day: limits.today }),
  };
}

/** A hold's price in the customer's money, as `resoldHold` records it. */
export function holdPrice(limits: Limits, amountNanos: bigint): bigint {
  const book = limits.subAccount?.price;
  return book ? customerPrice(amountNanos, book.markupBasisPoints) : amountNanos;
}

/**
 * The price book a charge is priced at: the one its hold recorded (so a change after the hold does not reach it),
 * or, for a hold the stream no longer has open (released, expired), the one in force at the settle.
 */
export function chargeBook(hold: Hold | undefined, limits: Limits): PriceBook | undefined {
  if (hold) {
    return hold.markupBasisPoints === undefined
      ? undefined
      : { markupBasisPoints: hold.markupBasisPoints, revision: hold.priceBookRevision ?? 0 };
  }
  return limits.subAccount?.price;
}

interface Resold {
  priceNanos?: string;
  marginNanos?: string;
  markupBasisPoints?: number;
  day?: string;
}

/**
 * The customer's side of a settlement that posts `chargedNanos` and overruns by `overrunNanos`: the settle is priced
 * at price(charged) and the overrun at price(charged + overrun) − price(charged), so that the two add up to the price
 * of what the provider billed, and each margin is its price less its cost.
 */
export function resoldCharge(
  subAccountId: string | null,
  book: PriceBook | undefined,
  limits: Limits,
  chargedNanos: bigint,
  overrunNanos: bigint,
): { settled: Resold & { priceBookRevision?: number }; overrun: Resold } {
  if (subAccountId === null) return { settled: {}, overrun: {} };
  const day = limits.today === undefined ? {} : { day: limits.today };
  if (!book) return { settled: day, overrun: day };
  const markup = book.markupBasisPoints;
  const settledPrice = customerPrice(chargedNanos, markup);
  const overrunPrice = customerPrice(chargedNanos + overrunNanos, markup) - settledPrice;
  return {
    settled: {
      priceNanos: settledPrice.toString(),
      marginNanos: (settledPrice - chargedNanos).toString(),
      markupBasisPoints: markup,
      priceBookRevision: book.revision,
      ...day,
    },
    overrun: {
      priceNanos: overrunPrice.toString(),
      marginNanos: (overrunPrice - overrunNanos).toString(),
      markupBasisPoints: markup,
      ...day,
    },
  };
}

/** What the events of a settlement charged the customer: the price of each charge (its cost where it has none). */
export function pricedTotal(events: readonly BudgetEvent[]): bigint {
  let total = 0n;
  for (const event of events) {
    if (event.type === 'SpendSettled') total += BigInt(event.data.priceNanos ?? event.data.chargedNanos);
    if (event.type === 'SpendOverrun') total += BigInt(event.data.priceNanos ?? event.data.overrunNanos);
  }
  return total;
}

/** The days a closing month carries per sub-account: those of its last ISO week that runs on into the next. */
export function carriedDays(state: BudgetState): Map<string, Map<string, bigint>> {
  const from = firstCarriedDay(state.month);
  const carried = new Map<string, Map<string, bigint>>();
  if (from === undefined) return carried;
  for (const [sub, days] of state.subAccountDayCharged) {
    const kept = new Map([...days].filter(([day]) => day >= from));
    if (kept.size > 0) carried.set(sub, kept);
  }
  return carried;
}

export function carriedDaysData(days: ReadonlyMap<string, ReadonlyMap<string, bigint>> | undefined): {
  subAccountDayChargedNanos?: Record<string, Record<string, string>>;
} {
  if (!days || days.size === 0) return {};
  return {
    subAccountDayChargedNanos: Object.fromEntries(
      [...days].map(([sub, byDay]) => [
        sub,
        Object.fromEntries([...byDay].map(([day, n]) => [day, n.toString()])),
      ]),
    ),
  };
}
