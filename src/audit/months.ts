import { firstCarriedDay } from '../../commands/budget/periods.ts';
import { type BudgetEvent, previousMonth } from '../../events/budget.ts';
import { categorize } from '../../events/categories.ts';
import type { StoredEvent } from '../../events/envelope.ts';
import type { GatewayEvent } from '../../events/index.ts';
import { usd } from './decimal.ts';
import { Findings, where } from './findings.ts';

interface AccountMonths {
  charged: bigint;
  /** Lifetime adjustments, and each by its reference as the months carry it (amount, reason, reversed top-up). */
  adjusted: bigint;
  adjustments: Map<string, string>;
  /** Lifetime charges per sub-account, in its price. */
  subAccountCharged: Map<string, bigint>;
  /** Charges per sub-account and the day each records, in its price: the days a week's cap carries over. */
  subAccountDays: Map<string, Map<string, bigint>>;
  openHolds: Map<string, bigint>;
  months: Map<string, 'open' | 'closed'>;
}

type Carried = Extract<GatewayEvent, { type: 'BudgetMonthOpened' }>['data'];

/** One adjustment as comparable text: its amount, reason and reversed top-up. */
const adjustmentKey = (a: { amountNanos: string; reason: string; reverses?: string | undefined }) =>
  JSON.stringify([a.amountNanos, a.reason, a.reverses ?? null]);

const carriedAdjustments = (data: Carried) =>
  new Map(Object.entries(data.adjustments ?? {}).map(([reference, a]) => [reference, adjustmentKey(a)]));

/**
 * Budget months: each opens once, after the month before closed, carrying exactly the lifetime charges,
 * sub-account charges and open holds that the log adds up to; nothing is appended to a month that is closed
 * or not opened; a closing records the same figures.
 */
export class MonthBook {
  readonly findings = new Findings();
  private readonly accounts = new Map<string, AccountMonths>();
  opened = 0;

  /** Only the budget streams hold money; events of other categories never concern this check. */
  apply(stored: StoredEvent, event: GatewayEvent): void {
    const sorted = categorize(event);
    if (sorted.category === 'budget') this.applyBudget(stored, sorted.event);
  }

  private applyBudget(stored: StoredEvent, event: BudgetEvent): void {
    switch (event.type) {
      case 'BudgetMonthOpened':
        this.open(stored, event.data);
        return;
      case 'BudgetMonthClosed': {
        const book = this.book(event.data.accountId);
        this.requireOpen(stored, book, event.data.month, event.type);
        this.compareCarried(stored, book, event.data, 'closes');
        book.months.set(event.data.month, 'closed');
        return;
      }
      case 'SpendReserved': {
        const book = this.book(event.data.accountId);
        this.requireOpen(stored, book, event.data.month, event.type);
        const amount = BigInt(event.data.amountNanos);
        // A hold carved from a lease moves its amount out of it: a lease is carried at what is left of it.
        const lease = event.data.leaseId === undefined ? undefined : book.openHolds.get(event.data.leaseId);
        if (event.data.leaseId !== undefined && lease !== undefined)
          book.openHolds.set(event.data.leaseId, lease - amount);
        book.openHolds.set(event.data.holdId, amount);
        return;
      }
      case 'SpendSettled':
      case 'SpendOverrun': {
        const book = this.book(event.data.accountId);
        this.requireOpen(stored, book, event.data.month, event.type);
        const amount = BigInt(
          event.type === 'SpendSettled' ? event.data.chargedNanos : event.data.overrunNanos,
        );
        book.charged += amount;
        const sub = event.data.subAccountId;
        // A sub-account's spending is carried in its price (docs/billing.md, Reselling).
        const price = BigInt(event.data.priceNanos ?? amount);
        if (sub) book.subAccountCharged.set(sub, (book.subAccountCharged.get(sub) ?? 0n) + price);
        if (sub && event.data.day !== undefined) addDay(book, sub, event.data.day, price);
        book.openHolds.delete(event.data.holdId);
        return;
      }
      case 'SpendReleased': {
        const book = this.book(event.data.accountId);
        this.requireOpen(stored, book, event.data.month, event.type);
        book.openHolds.delete(event.data.holdId);
        return;
      }
      case 'BalanceAdjusted': {
        const book = this.book(event.data.accountId);
        this.requireOpen(stored, book, event.data.month, event.type);
        const { reference, amountNanos, reason, reverses } = event.data;
        book.adjusted += BigInt(amountNanos);
        book.adjustments.set(reference, adjustmentKey({ amountNanos, reason, reverses }));
        return;
      }
      case 'BalanceLowReached':
      case 'BalanceExhausted':
      case 'TagUsageThresholdExceeded':
      case 'SubAccountSpendExceeded':
        this.requireOpen(stored, this.book(event.data.accountId), event.data.month, event.type);
        return;
      case 'RequestCompleted':
        return;
      default: {
        const _exhaustive: never = event;
        return;
      }
    }
  }

  private book(accountId: string): AccountMonths {
    let book = this.accounts.get(accountId);
    if (!book) {
      book = {
        charged: 0n,
        adjusted: 0n,
        adjustments: new Map(),
        subAccountCharged: new Map(),
        subAccountDays: new Map(),
        openHolds: new Map(),
        months: new Map(),
      };
      this.accounts.set(accountId, book);
    }
    return book;
  }

  private open(stored: StoredEvent, data: Carried): void {
    const book = this.book(data.accountId);
    this.opened += 1;
    if (book.months.has(data.month))
      this.findings.fail(`${where(stored)}: month ${data.month} is opened again`);
    const before = previousMonth(data.month);
    if (book.months.size > 0 && book.months.get(before) !== 'closed')
      this.findings.fail(`${where(stored)}: ${data.month} opens while ${before} is not closed`);
    this.compareCarried(stored, book, data, 'opens with');
    book.months.set(data.month, 'open');
    // Whatever was carried is what the month goes on from, so one wrong carry is reported once.
    book.charged = BigInt(data.lifetimeChargedNanos);
    book.subAccountCharged = new Map(
      Object.entries(data.subAccountChargedNanos).map(([k, v]) => [k, BigInt(v)]),
    );
    book.openHolds = new Map(data.openHolds.map((h) => [h.holdId, BigInt(h.amountNanos)]));
    book.subAccountDays = new Map();
    for (const [sub, days] of Object.entries(data.subAccountDayChargedNanos ?? {}))
      for (const [day, nanos] of Object.entries(days)) addDay(book, sub, day, BigInt(nanos));
    book.adjusted = BigInt(data.adjustedNanos ?? '0');
    book.adjustments = carriedAdjustments(data);
  }

  private requireOpen(stored: StoredEvent, book: AccountMonths, month: string, type: string): void {
    const state = book.months.get(month);
    if (state === 'open') return;
    this.findings.fail(`${where(stored)}: ${type} in month ${month}, which is ${state ?? 'not opened'}`);
  }

  private compareCarried(stored: StoredEvent, book: AccountMonths, data: Carried, verb: string): void {
    const at = `${where(stored)}: ${data.month} ${verb}`;
    const lifetime = BigInt(data.lifetimeChargedNanos);
    if (lifetime !== book.charged)
      this.findings.fail(
        `${at} lifetime charges of ${usd(lifetime)}; the log adds up to ${usd(book.charged)}`,
      );
    const subs = new Set([...Object.keys(data.subAccountChargedNanos), ...book.subAccountCharged.keys()]);
    for (const sub of subs) {
      const recorded = BigInt(data.subAccountChargedNanos[sub] ?? '0');
      const computed = book.subAccountCharged.get(sub) ?? 0n;
      if (recorded !== computed)
        this.findings.fail(
          `${at} ${usd(recorded)} charged to sub-account ${sub}; the log adds up to ${usd(computed)}`,
        );
    }
    const carried = new Map(data.openHolds.map((h) => [h.holdId, BigInt(h.amountNanos)]));
    for (const [holdId, amount] of carried) {
      if (book.openHolds.get(holdId) !== amount)
        this.findings.fail(
          `${at} hold ${holdId} of ${usd(amount)}, which the log does not show open at that amount`,
        );
    }
    for (const holdId of book.openHolds.keys()) {
      if (!carried.has(holdId)) this.findings.fail(`${at} no hold ${holdId}, which the log shows open`);
    }
    // A week that runs on into the next month carries its days' spending, for a weekly cap.
    const closing = verb === 'closes' ? data.month : previousMonth(data.month);
    const from = firstCarriedDay(closing);
    const days = new Set<string>();
    for (const [sub, byDay] of book.subAccountDays)
      for (const day of byDay.keys()) if (from !== undefined && day >= from) days.add(`${sub}/${day}`);
    for (const [sub, byDay] of Object.entries(data.subAccountDayChargedNanos ?? {}))
      for (const day of Object.keys(byDay)) days.add(`${sub}/${day}`);
    for (const key of days) {
      const [sub, day] = key.split('/') as [string, string];
      const recorded = BigInt(data.subAccountDayChargedNanos?.[sub]?.[day] ?? '0');
      const computed =
        from !== undefined && day >= from ? (book.subAccountDays.get(sub)?.get(day) ?? 0n) : 0n;
      if (recorded !== computed)
        this.findings.fail(
          `${at} ${usd(recorded)} spent by sub-account ${sub} on ${day}; the log adds up to ${usd(computed)}`,
        );
    }
    const adjusted = BigInt(data.adjustedNanos ?? '0');
    if (adjusted !== book.adjusted)
      this.findings.fail(`${at} adjustments of ${usd(adjusted)}; the log adds up to ${usd(book.adjusted)}`);
    const adjustments = carriedAdjustments(data);
    for (const reference of new Set([...adjustments.keys(), ...book.adjustments.keys()])) {
      if (adjustments.get(reference) !== book.adjustments.get(reference))
        this.findings.fail(`${at} adjustment ${reference} other than the log records it`);
    }
  }
}

function addDay(book: AccountMonths, sub: string, day: string, nanos: bigint): void {
  const days = book.subAccountDays.get(sub) ?? new Map<string, bigint>();
  days.set(day, (days.get(day) ?? 0n) + nanos);
  book.subAccountDays.set(sub, days);
}
