import { inPeriod, periodStart } from '../../commands/budget/periods.ts';
import type { BudgetEvent } from '../../events/budget.ts';
import type { StoredEvent } from '../../events/envelope.ts';
import type { GatewayEvent } from '../../events/index.ts';
import { usd } from './decimal.ts';
import { type Findings, where } from './findings.ts';

type Reset = 'daily' | 'weekly' | 'monthly' | null;

interface SubAccount {
  accountId: string;
  cap: bigint;
  reset: Reset;
  deleted: boolean;
  lifetime: bigint;
  /** Charges per budget month, and per UTC day as each charge records it, in its price. */
  months: Map<string, bigint>;
  days: Map<string, bigint>;
}

/** An open hold of a sub-account, at its price (a lease at what is left of its price). */
interface OpenHold {
  subAccountId: string;
  price: bigint;
  lease: boolean;
}

type Reserved = Extract<BudgetEvent, { type: 'SpendReserved' }>['data'];

/** How far a recorded day may stand from the time its event was stored (a command decided across midnight). */
const DAY_SKEW_MS = 5 * 60 * 1000;

/**
 * A sub-account's spend cap in its own price (docs/billing.md, Reselling), for life or per UTC day, ISO week or
 * budget month, replayed from the log: at every reservation, its price fits the cap less what the sub-account spent
 * in the period (the day the hold records, the month it is booked to) and what it holds. A hold carved from a lease
 * of the sub-account moves price within it, when the lease covers it. Part of the caps check (src/audit/caps.ts).
 */
export class SubAccountCaps {
  private readonly subs = new Map<string, SubAccount>();
  private readonly holds = new Map<string, OpenHold>();
  reservations = 0;

  constructor(private readonly findings: Findings) {}

  apply(stored: StoredEvent, event: GatewayEvent): void {
    switch (event.type) {
      case 'SubAccountCreated':
        this.subs.set(event.data.subAccountId, {
          accountId: event.data.accountId,
          cap: BigInt(event.data.spendCapNanos),
          reset: event.data.spendCapReset ?? null,
          deleted: false,
          lifetime: 0n,
          months: new Map(),
          days: new Map(),
        });
        return;
      case 'SubAccountUpdated': {
        const sub = this.subs.get(event.data.subAccountId);
        if (!sub) return;
        if (event.data.spendCapNanos !== undefined) sub.cap = BigInt(event.data.spendCapNanos);
        if (event.data.spendCapReset !== undefined) sub.reset = event.data.spendCapReset;
        return;
      }
      case 'SubAccountDeleted': {
        const sub = this.subs.get(event.data.subAccountId);
        if (sub) sub.deleted = true;
        return;
      }
      case 'BudgetMonthOpened':
        for (const hold of event.data.openHolds) {
          const key = `${event.data.accountId}/${hold.holdId}`;
          if (hold.subAccountId !== null && !this.holds.has(key))
            this.holds.set(key, {
              subAccountId: hold.subAccountId,
              price: BigInt(hold.priceNanos ?? hold.amountNanos),
              lease: hold.lease === true,
            });
        }
        return;
      case 'SpendReserved':
        if (event.data.subAccountId !== null) this.reserve(stored, event.data, event.data.subAccountId);
        return;
      case 'SpendSettled':
        this.holds.delete(`${event.data.accountId}/${event.data.holdId}`);
        this.post(event.data, BigInt(event.data.priceNanos ?? event.data.chargedNanos));
        return;
      case 'SpendOverrun':
        this.post(event.data, BigInt(event.data.priceNanos ?? event.data.overrunNanos));
        return;
      case 'SpendReleased':
        this.holds.delete(`${event.data.accountId}/${event.data.holdId}`);
        return;
      default:
        return;
    }
  }

  /** The sub-account's cap an overrun, once posted, leaves spent past, as the caps check words it. */
  crossedBy(data: Extract<BudgetEvent, { type: 'SpendOverrun' }>['data']): string | undefined {
    const sub = data.subAccountId === null ? undefined : this.subs.get(data.subAccountId);
    if (!sub) return undefined;
    const day = data.day ?? `${data.month}-01`;
    const spent = this.spent(sub, data.month, day);
    if (spent <= sub.cap) return undefined;
    return `sub-account ${data.subAccountId}'s cap${periodName(sub.reset, data.month, day)} (cap ${usd(sub.cap)}, spent ${usd(spent)})`;
  }

  private post(data: { subAccountId: string | null; month: string; day?: string }, price: bigint): void {
    const sub = data.subAccountId === null ? undefined : this.subs.get(data.subAccountId);
    if (!sub) return;
    sub.lifetime += price;
    sub.months.set(data.month, (sub.months.get(data.month) ?? 0n) + price);
    if (data.day !== undefined) sub.days.set(data.day, (sub.days.get(data.day) ?? 0n) + price);
  }

  /** What the sub-account spent in the period its cap counts on `day` (in `month`'s stream). */
  private spent(sub: SubAccount, month: string, day: string): bigint {
    if (sub.reset === null) return sub.lifetime;
    if (sub.reset === 'monthly') return sub.months.get(month) ?? 0n;
    let spent = 0n;
    for (const [d, nanos] of sub.days) if (inPeriod(sub.reset, d, day)) spent += nanos;
    return spent;
  }

  private reserve(stored: StoredEvent, data: Reserved, subAccountId: string): void {
    const price = BigInt(data.priceNanos ?? data.amountNanos);
    const key = `${data.accountId}/${data.holdId}`;
    const lease =
      data.leaseId === undefined ? undefined : this.holds.get(`${data.accountId}/${data.leaseId}`);
    if (lease?.lease && lease.subAccountId === subAccountId && price <= lease.price) {
      // Carved from a lease of the sub-account that covers it: counted against its cap when the lease was granted.
      lease.price -= price;
      this.holds.set(key, { subAccountId, price, lease: false });
      return;
    }
    this.reservations += 1;
    const at = `${where(stored)} (${stored.occurredAt.toISOString()})`;
    let held = 0n;
    for (const hold of this.holds.values()) if (hold.subAccountId === subAccountId) held += hold.price;
    this.holds.set(key, { subAccountId, price, lease: data.lease === true });
    const sub = this.subs.get(subAccountId);
    // In the sub-account's price, as its cap is.
    const hold = `hold ${data.holdId} of ${usd(price)}`;
    if (!sub || sub.accountId !== data.accountId) {
      this.findings.fail(`${at}: ${hold} is for sub-account ${subAccountId}, unknown to this account`);
      return;
    }
    if (sub.deleted) this.findings.note(`${at}: ${hold} is for sub-account ${subAccountId}, already deleted`);
    const day = this.dayOf(stored, data, at);
    const spent = this.spent(sub, data.month, day);
    const room = sub.cap - spent - held;
    if (price > room && price > 0n) {
      this.findings.fail(
        `${at}: ${hold} exceeds sub-account ${subAccountId}'s cap${periodName(sub.reset, data.month, day)}: cap ${usd(sub.cap)} − spent ${usd(spent)} − held ${usd(held)} = ${usd(room)}`,
      );
    }
  }

  /** The day a hold was decided on: the one it records, which must be the day it was stored (give or take). */
  private dayOf(stored: StoredEvent, data: Reserved, at: string): string {
    const stamped = stored.occurredAt.toISOString().slice(0, 10);
    if (data.day === undefined) return stamped;
    const start = Date.parse(`${data.day}T00:00:00.000Z`);
    const time = stored.occurredAt.getTime();
    if (time < start - DAY_SKEW_MS || time > start + 86_400_000 + DAY_SKEW_MS)
      this.findings.fail(`${at}: hold ${data.holdId} records the day ${data.day}, not the day it was stored`);
    return data.day;
  }
}

function periodName(reset: Reset, month: string, day: string): string {
  if (reset === null) return '';
  if (reset === 'monthly') return ` for ${month}`;
  return ` for the ${reset === 'daily' ? 'day' : 'week from'} ${periodStart(reset, day)}`;
}
