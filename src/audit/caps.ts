import type { AccountEvent } from '../../events/account.ts';
import type { BudgetEvent } from '../../events/budget.ts';
import { categorize } from '../../events/categories.ts';
import type { StoredEvent } from '../../events/envelope.ts';
import { type GatewayEvent, parseEvent } from '../../events/index.ts';
import { logicalEvents } from '../../events/logical.ts';
import type { SubAccountEvent } from '../../events/subaccount.ts';
import { checkAdjustment } from './adjustments.ts';
import { usd } from './decimal.ts';
import { Findings, where } from './findings.ts';
import { SubAccountCaps } from './sub-account-caps.ts';

interface OpenHold {
  amount: bigint;
  subAccountId: string | null;
  tag: string | null;
}

interface AccountBook {
  /** What the account was given to spend: top-ups less refunds, plus adjustments. */
  toppedUp: bigint;
  /** What is left of each top-up after refunds and a reversal, by reference. */
  topUps: Map<string, bigint>;
  /** Top-ups an adjustment reversed, with the adjustment's reference. */
  reversedBy: Map<string, string>;
  charged: bigint;
  subAccountCharged: Map<string, bigint>;
  /** This month's charges per tag, keyed `month/tag`. */
  tagCharged: Map<string, bigint>;
  tagCaps: Map<string, bigint>;
  holds: Map<string, OpenHold>;
}

interface SubAccountCap {
  accountId: string;
  cap: bigint;
  deleted: boolean;
}

function plus(map: Map<string, bigint>, key: string, amount: bigint): void {
  map.set(key, (map.get(key) ?? 0n) + amount);
}

/**
 * Replays the log in order and checks, at every reservation (a spend lease is one), that posted + pending ≤ limit
 * for each cap the hold is under (a hold carved from a lease moves money out of the lease, so the sums do not
 * change): the account's balance (top-ups known at that point), the sub-account's lifetime spend cap in
 * force then, and the tag's budget for that month. An overrun (a provider billing beyond the hold) is money the
 * hold did not cover: when it carries a scope past its limit, it was spent without the owner's room for it, and that
 * is a failure; within every limit it is a warning (the worst case held was wrong, but no limit was crossed). The
 * next reservation must still fit.
 */
export class CapReplay {
  readonly findings = new Findings();
  private readonly accounts = new Map<string, AccountBook>();
  private readonly subAccounts = new Map<string, SubAccountCap>();
  reservations = 0;
  overruns = 0;
  /** Sub-accounts' caps, in their price and per period: checked apart, into the same findings. */
  readonly subAccountCaps = new SubAccountCaps(this.findings);

  apply(stored: StoredEvent, event: GatewayEvent): void {
    this.subAccountCaps.apply(stored, event);
    const sorted = categorize(event);
    switch (sorted.category) {
      case 'account':
        this.applyAccount(stored, sorted.event);
        return;
      case 'subaccount':
        this.applySubAccount(sorted.event);
        return;
      case 'budget':
        this.applyBudget(stored, sorted.event);
        return;
      case 'job':
      case 'file':
      case 'batch':
      case 'webhook':
      case 'webhooksecret':
      case 'replay':
      case 'eval':
      case 'cache':
      case 'catalog':
      case 'credential':
      case 'reconciliation':
        return;
      default: {
        const _exhaustive: never = sorted;
        return;
      }
    }
  }

  private applyAccount(stored: StoredEvent, event: AccountEvent): void {
    switch (event.type) {
      case 'AccountToppedUp': {
        const book = this.book(event.data.accountId);
        book.toppedUp += BigInt(event.data.amountNanos);
        book.topUps.set(event.data.reference, BigInt(event.data.amountNanos));
        return;
      }
      case 'AccountTopUpReversed': {
        const book = this.book(event.data.accountId);
        book.toppedUp -= BigInt(event.data.amountNanos);
        const topUp = book.topUps.get(event.data.reference);
        if (topUp !== undefined)
          book.topUps.set(event.data.reference, topUp - BigInt(event.data.amountNanos));
        // A refund is the processor's fact and is recorded whole; money already spent is then owed, and said so.
        const left = book.toppedUp - book.charged;
        if (left < 0n)
          this.findings.warn(
            `${where(stored)}: the reversal of top-up ${event.data.reference} (${usd(BigInt(event.data.amountNanos))}) leaves account ${event.data.accountId} at ${usd(left)}, below what it had already spent`,
          );
        return;
      }
      case 'TagBudgetSet':
        this.book(event.data.accountId).tagCaps.set(event.data.tag, BigInt(event.data.capNanos));
        return;
      case 'TagBudgetRemoved':
        this.book(event.data.accountId).tagCaps.delete(event.data.tag);
        return;
      case 'AccountOpened':
      case 'ApiKeyIssued':
      case 'ApiKeyRevoked':
      case 'ApiKeyRotated':
      case 'AccountSettingsChanged':
      case 'DailyUsageSummarized':
      case 'WebhookEndpointSet':
      case 'ProviderKeyRegistered':
      case 'ProviderKeyRemoved':
        return;
      default: {
        const _exhaustive: never = event;
        return;
      }
    }
  }

  private applySubAccount(event: SubAccountEvent): void {
    switch (event.type) {
      case 'SubAccountCreated':
        this.subAccounts.set(event.data.subAccountId, {
          accountId: event.data.accountId,
          cap: BigInt(event.data.spendCapNanos),
          deleted: false,
        });
        return;
      case 'SubAccountUpdated': {
        const sub = this.subAccounts.get(event.data.subAccountId);
        if (sub && event.data.spendCapNanos !== undefined) sub.cap = BigInt(event.data.spendCapNanos);
        return;
      }
      case 'SubAccountDeleted': {
        const sub = this.subAccounts.get(event.data.subAccountId);
        if (sub) sub.deleted = true;
        return;
      }
      // Keys change who may spend, not how much: every key of a sub-account spends under its cap.
      case 'SubAccountKeyIssued':
      case 'SubAccountKeyRevoked':
      case 'SubAccountKeyRotated':
        return;
      default: {
        const _exhaustive: never = event;
        return;
      }
    }
  }

  private applyBudget(stored: StoredEvent, event: BudgetEvent): void {
    switch (event.type) {
      case 'BudgetMonthOpened': {
        const book = this.book(event.data.accountId);
        for (const hold of event.data.openHolds) {
          if (!book.holds.has(hold.holdId))
            book.holds.set(hold.holdId, { ...hold, amount: BigInt(hold.amountNanos) });
        }
        return;
      }
      case 'SpendReserved':
        this.reserve(stored, event.data);
        return;
      case 'SpendSettled': {
        const book = this.book(event.data.accountId);
        book.holds.delete(event.data.holdId);
        this.post(book, event.data, BigInt(event.data.chargedNanos));
        return;
      }
      case 'SpendOverrun': {
        this.overruns += 1;
        const book = this.book(event.data.accountId);
        this.post(book, event.data, BigInt(event.data.overrunNanos));
        this.overrun(stored, book, event.data);
        return;
      }
      case 'SpendReleased':
        this.book(event.data.accountId).holds.delete(event.data.holdId);
        return;
      case 'BalanceAdjusted':
        checkAdjustment(this.book(event.data.accountId), event.data, where(stored), this.findings);
        return;
      case 'BudgetMonthClosed':
      case 'BalanceLowReached':
      case 'BalanceExhausted':
      case 'TagUsageThresholdExceeded':
      case 'SubAccountSpendExceeded':
      case 'RequestCompleted':
        return;
      default: {
        const _exhaustive: never = event;
        return;
      }
    }
  }

  private book(accountId: string): AccountBook {
    let book = this.accounts.get(accountId);
    if (!book) {
      book = {
        toppedUp: 0n,
        topUps: new Map(),
        reversedBy: new Map(),
        charged: 0n,
        subAccountCharged: new Map(),
        tagCharged: new Map(),
        tagCaps: new Map(),
        holds: new Map(),
      };
      this.accounts.set(accountId, book);
    }
    return book;
  }

  private post(
    book: AccountBook,
    scopes: { month: string; subAccountId: string | null; tag: string | null },
    amount: bigint,
  ): void {
    book.charged += amount;
    if (scopes.subAccountId) plus(book.subAccountCharged, scopes.subAccountId, amount);
    if (scopes.tag) plus(book.tagCharged, `${scopes.month}/${scopes.tag}`, amount);
  }

  /** Which limits the overrun, once posted, leaves spent past. */
  private overrun(
    stored: StoredEvent,
    book: AccountBook,
    data: Extract<GatewayEvent, { type: 'SpendOverrun' }>['data'],
  ): void {
    const crossed: string[] = [];
    if (book.charged > book.toppedUp)
      crossed.push(
        `account ${data.accountId}'s balance (top-ups ${usd(book.toppedUp)}, charged ${usd(book.charged)})`,
      );
    const sub = this.subAccountCaps.crossedBy(data);
    if (sub) crossed.push(sub);
    const tagCap = data.tag ? book.tagCaps.get(data.tag) : undefined;
    const tagSpent = data.tag ? (book.tagCharged.get(`${data.month}/${data.tag}`) ?? 0n) : 0n;
    if (tagCap !== undefined && tagSpent > tagCap)
      crossed.push(`tag '${data.tag}' budget for ${data.month} (cap ${usd(tagCap)}, spent ${usd(tagSpent)})`);
    const overrun = `${where(stored)}: overrun of ${usd(BigInt(data.overrunNanos))} on hold ${data.holdId} (request ${data.requestId}, billed beyond the hold)`;
    if (crossed.length > 0) this.findings.fail(`${overrun} spends past ${crossed.join(' and ')}`);
    else this.findings.warn(`${overrun}, within every limit`);
  }

  private reserve(stored: StoredEvent, data: Extract<GatewayEvent, { type: 'SpendReserved' }>['data']): void {
    const book = this.book(data.accountId);
    const amount = BigInt(data.amountNanos);
    const lease = data.leaseId === undefined ? undefined : book.holds.get(data.leaseId);
    if (lease && amount <= lease.amount) {
      // Carved from a lease that covers it: already counted against every cap when the lease was granted.
      lease.amount -= amount;
      book.holds.set(data.holdId, { amount, subAccountId: data.subAccountId, tag: data.tag });
      return;
    }
    // A carve its lease does not cover (the holds check names it) is checked as a hold of its own.
    this.reservations += 1;
    const at = `${where(stored)} (${stored.occurredAt.toISOString()})`;
    // A free call (a $0 moderation model, say) is held at zero by design (docs/billing.md); only less is wrong.
    if (amount < 0n) this.findings.fail(`${at}: hold ${data.holdId} reserves ${usd(amount)}`);
    const heldBefore = { total: 0n, subAccount: 0n, tag: 0n };
    for (const hold of book.holds.values()) {
      heldBefore.total += hold.amount;
      if (data.subAccountId && hold.subAccountId === data.subAccountId) heldBefore.subAccount += hold.amount;
      if (data.tag && hold.tag === data.tag) heldBefore.tag += hold.amount;
    }
    book.holds.set(data.holdId, { amount, subAccountId: data.subAccountId, tag: data.tag });
    const hold = `hold ${data.holdId} of ${usd(amount)}`;

    const balance = book.toppedUp - book.charged - heldBefore.total;
    if (amount > balance) {
      this.findings.fail(
        `${at}: ${hold} exceeds the account balance: top-ups ${usd(book.toppedUp)} − charged ${usd(book.charged)} − held ${usd(heldBefore.total)} = ${usd(balance)}`,
      );
    }
    // The sub-account's cap is in its price, for life or per period: ./sub-account-caps.ts.
    const cap = data.tag ? book.tagCaps.get(data.tag) : undefined;
    if (data.tag && cap !== undefined) {
      const spent = book.tagCharged.get(`${data.month}/${data.tag}`) ?? 0n;
      const room = cap - spent - heldBefore.tag;
      if (amount > room) {
        this.findings.fail(
          `${at}: ${hold} exceeds tag '${data.tag}' budget for ${data.month}: cap ${usd(cap)} − spent ${usd(spent)} − held ${usd(heldBefore.tag)} = ${usd(room)}`,
        );
      }
    }
  }
}

/** The replay over a list of stored events, for a log already in order (tests, tools). */
export function replayCaps(events: readonly StoredEvent[]): CapReplay {
  const replay = new CapReplay();
  for (const stored of events) {
    const parsed = parseEvent(stored);
    if (parsed.ok) for (const part of logicalEvents(parsed.event)) replay.apply(stored, part);
  }
  return replay;
}
