import { type BudgetEvent, previousMonth } from '../../events/budget.ts';
import { categorize } from '../../events/categories.ts';
import type { StoredEvent } from '../../events/envelope.ts';
import type { GatewayEvent } from '../../events/index.ts';
import { usd } from './decimal.ts';
import { Findings, where } from './findings.ts';

interface AccountMonths {
  charged: bigint;
  subAccountCharged: Map<string, bigint>;
  openHolds: Map<string, bigint>;
  months: Map<string, 'open' | 'closed'>;
}

type Carried = Extract<GatewayEvent, { type: 'BudgetMonthOpened' }>['data'];

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
        if (sub) book.subAccountCharged.set(sub, (book.subAccountCharged.get(sub) ?? 0n) + amount);
        book.openHolds.delete(event.data.holdId);
        return;
      }
      case 'SpendReleased': {
        const book = this.book(event.data.accountId);
        this.requireOpen(stored, book, event.data.month, event.type);
        book.openHolds.delete(event.data.holdId);
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
      book = { charged: 0n, subAccountCharged: new Map(), openHolds: new Map(), months: new Map() };
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
  }
}
