import type { BudgetEvent } from '../../events/budget.ts';
import { categorize } from '../../events/categories.ts';
import type { StoredEvent } from '../../events/envelope.ts';
import type { GatewayEvent } from '../../events/index.ts';
import { usd } from './decimal.ts';
import { Findings, where } from './findings.ts';

/** The expiry worker runs every 30 s; a hold this long past its expiry means it is not doing its job. */
export const EXPIRY_GRACE_MS = 10 * 60 * 1000;

interface HoldRecord {
  /** For a lease, what is left of it after the holds carved from it. */
  amount: bigint;
  expiresAt: string;
  status: 'open' | 'settled' | 'released';
  reservedAt: string;
  lease?: { subAccountId: string | null; tag: string | null };
}

/**
 * Every hold ends exactly once: settled (posting at most what it held, releasing the rest) or released (all of
 * it), or it is still open and not long expired. Holds are tracked per account, not per month, because an open
 * hold is carried from one month's stream into the next.
 *
 * A spend lease is a hold that is never settled: holds are carved out of it (each no larger than what is left of
 * it, of its scopes, while it is open), and it ends once, returned or expired, releasing exactly what is left.
 */
export class HoldBook {
  readonly findings = new Findings();
  private readonly holds = new Map<string, HoldRecord>();
  settled = 0;
  released = 0;
  leases = 0;
  carved = 0;

  /** Only the budget streams hold money; events of other categories never concern this check. */
  apply(stored: StoredEvent, event: GatewayEvent): void {
    const sorted = categorize(event);
    if (sorted.category === 'budget') this.applyBudget(stored, sorted.event);
  }

  private applyBudget(stored: StoredEvent, event: BudgetEvent): void {
    switch (event.type) {
      case 'SpendReserved': {
        const key = `${event.data.accountId}/${event.data.holdId}`;
        if (this.holds.has(key)) {
          this.findings.fail(`${where(stored)}: hold ${event.data.holdId} is reserved twice`);
          return;
        }
        if (event.data.leaseId !== undefined) this.carve(stored, event.data);
        this.holds.set(key, {
          amount: BigInt(event.data.amountNanos),
          expiresAt: event.data.expiresAt,
          status: 'open',
          reservedAt: where(stored),
          ...(event.data.lease && { lease: { subAccountId: event.data.subAccountId, tag: event.data.tag } }),
        });
        if (event.data.lease) this.leases += 1;
        return;
      }
      case 'BudgetMonthOpened':
        // A carried hold the log never reserved is the months check's finding; track it so it can end.
        for (const hold of event.data.openHolds) {
          const key = `${event.data.accountId}/${hold.holdId}`;
          if (!this.holds.has(key)) {
            this.holds.set(key, {
              amount: BigInt(hold.amountNanos),
              expiresAt: hold.expiresAt,
              status: 'open',
              reservedAt: where(stored),
              ...(hold.lease && { lease: { subAccountId: hold.subAccountId, tag: hold.tag } }),
            });
          }
        }
        return;
      case 'SpendSettled':
        this.settle(stored, event.data);
        return;
      case 'SpendReleased':
        this.release(stored, event.data);
        return;
      case 'SpendOverrun': {
        const hold = this.holds.get(`${event.data.accountId}/${event.data.holdId}`);
        if (hold?.status !== 'settled')
          this.findings.fail(
            `${where(stored)}: overrun of hold ${event.data.holdId}, which was never settled`,
          );
        return;
      }
      case 'BudgetMonthClosed':
      case 'BalanceAdjusted':
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

  private carve(stored: StoredEvent, data: Extract<GatewayEvent, { type: 'SpendReserved' }>['data']): void {
    const at = where(stored);
    const lease = this.holds.get(`${data.accountId}/${data.leaseId}`);
    const amount = BigInt(data.amountNanos);
    this.carved += 1;
    if (!lease?.lease) {
      this.findings.fail(`${at}: hold ${data.holdId} is carved from ${data.leaseId}, which is no lease`);
      return;
    }
    if (lease.status !== 'open') {
      this.findings.fail(`${at}: hold ${data.holdId} is carved from lease ${data.leaseId}, which has ended`);
      return;
    }
    if (lease.lease.subAccountId !== data.subAccountId || lease.lease.tag !== data.tag)
      this.findings.fail(`${at}: hold ${data.holdId} has other scopes than lease ${data.leaseId}`);
    if (amount > lease.amount)
      this.findings.fail(
        `${at}: hold ${data.holdId} of ${usd(amount)} is carved from lease ${data.leaseId}, which has ${usd(lease.amount)} left`,
      );
    lease.amount -= amount;
  }

  private settle(stored: StoredEvent, data: Extract<GatewayEvent, { type: 'SpendSettled' }>['data']): void {
    const at = where(stored);
    const held = BigInt(data.heldNanos);
    const charged = BigInt(data.chargedNanos);
    if (charged < 0n || charged > held)
      this.findings.fail(`${at}: hold ${data.holdId} posts ${usd(charged)} against ${usd(held)} held`);
    if (BigInt(data.releasedNanos) !== held - charged) {
      this.findings.fail(
        `${at}: hold ${data.holdId} releases ${usd(BigInt(data.releasedNanos))}, not held − charged = ${usd(held - charged)}`,
      );
    }
    const hold = this.holds.get(`${data.accountId}/${data.holdId}`);
    if (!hold) {
      this.findings.fail(`${at}: hold ${data.holdId} is settled but was never reserved`);
      return;
    }
    if (hold.lease) {
      this.findings.fail(`${at}: lease ${data.holdId} is settled; only the holds carved from it are`);
      return;
    }
    switch (hold.status) {
      case 'settled':
        this.findings.fail(`${at}: hold ${data.holdId} is settled a second time`);
        return;
      case 'released':
        // The design lets a late settlement charge a released hold, as an overrun of nothing held.
        if (held === 0n && charged === 0n)
          this.findings.note(`${at}: hold ${data.holdId} settled after its release; billed as an overrun`);
        else this.findings.fail(`${at}: hold ${data.holdId} was released, then settled against ${usd(held)}`);
        hold.status = 'settled';
        return;
      case 'open':
        if (held !== hold.amount)
          this.findings.fail(
            `${at}: hold ${data.holdId} settles ${usd(held)} held, but ${usd(hold.amount)} was reserved`,
          );
        hold.status = 'settled';
        this.settled += 1;
        return;
      default: {
        const _exhaustive: never = hold.status;
        return;
      }
    }
  }

  private release(stored: StoredEvent, data: Extract<GatewayEvent, { type: 'SpendReleased' }>['data']): void {
    const at = where(stored);
    const hold = this.holds.get(`${data.accountId}/${data.holdId}`);
    if (!hold) {
      this.findings.fail(`${at}: hold ${data.holdId} is released but was never reserved`);
      return;
    }
    switch (hold.status) {
      case 'settled':
        this.findings.fail(`${at}: hold ${data.holdId} is released after its settlement`);
        return;
      case 'released':
        this.findings.fail(`${at}: hold ${data.holdId} is released a second time`);
        return;
      case 'open':
        if (BigInt(data.amountNanos) !== hold.amount) {
          this.findings.fail(
            `${at}: ${hold.lease ? 'lease' : 'hold'} ${data.holdId} releases ${usd(BigInt(data.amountNanos))}, but ${usd(hold.amount)} ${hold.lease ? 'was left of it' : 'was reserved'}`,
          );
        }
        if (data.reason === 'returned' && !hold.lease)
          this.findings.fail(`${at}: hold ${data.holdId} is returned, which only a lease is`);
        if (data.reason === 'expired' && stored.occurredAt.getTime() < Date.parse(hold.expiresAt))
          this.findings.fail(`${at}: hold ${data.holdId} expired before its expiry time ${hold.expiresAt}`);
        hold.status = 'released';
        if (!hold.lease) this.released += 1;
        return;
      default: {
        const _exhaustive: never = hold.status;
        return;
      }
    }
  }

  /** The holds still open at the end of the log: fine until they expire, a failure long after. */
  finish(now: Date): { open: number; total: number; openLeases: number } {
    let open = 0;
    let openLeases = 0;
    for (const [key, hold] of this.holds) {
      if (hold.status !== 'open') continue;
      if (hold.lease) openLeases += 1;
      else open += 1;
      const overdueMs = now.getTime() - Date.parse(hold.expiresAt);
      if (overdueMs <= 0) continue;
      const message = `${hold.lease ? 'lease' : 'hold'} ${key.slice(key.indexOf('/') + 1)} (${hold.reservedAt}) is open ${Math.round(overdueMs / 1000)} s past its expiry ${hold.expiresAt}`;
      if (overdueMs > EXPIRY_GRACE_MS) this.findings.fail(message);
      else this.findings.warn(`${message}; the expiry worker may not have run yet`);
    }
    return { open, total: this.holds.size - this.leases, openLeases };
  }
}
