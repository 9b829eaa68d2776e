import { randomUUID } from 'node:crypto';
import type { Limits, ReserveCommand } from '../../commands/budget/decide.ts';
import type { BudgetLedger } from '../../commands/budget/handler.ts';
import { holdPrice } from '../../commands/budget/resold.ts';

/** How long a lease admits requests before what is left of it is returned. */
export const LEASE_ADMIT_MS = 2000;
/** A scope is leased once this many requests came for it within one admission window. */
const DEMAND = 4;
/** A lease asks for at least this many of the largest recent request, and for twice the last window's use. */
const WANT_REQUESTS = 32n;
/** The least lease worth taking, in requests the size of the one asking; below it requests hold on their own. */
const LEAST_REQUESTS = 4n;
/** A lease nothing was admitted under for this long is returned: an instance whose traffic stopped keeps nothing. */
const IDLE_MS = 200;
/** After a lease was not granted (a scope near its cap), requests hold on their own this long before asking again. */
const REFUSED_BACKOFF_MS = 250;

interface Lease {
  leaseId: string;
  freeNanos: bigint;
  /**
   * What is free of a sub-account's lease in its price: each carve's price rounds up on its own, so a lease can run
   * out of price before it runs out of cost, and the decider carves only what fits both (docs/billing.md).
   */
  freePriceNanos: bigint;
  sizeNanos: bigint;
  admitUntil: number;
  lastUsed: number;
  /** The caps it was granted under: a changed cap or budget returns it, so no request is admitted under an old one. */
  caps: string;
  /**
   * The holds carved from it in memory whose request has not ended: their carves are stored only if the lease is
   * returned before they end (a request that ends first carries its carve in its settlement, one event in all).
   */
  outstanding: Map<string, Carved>;
}

/** The carving of an admitted hold out of a lease, as the budget decider takes it. */
export type Carve = (leaseId: string) => ReserveCommand;

/** A hold carved from a lease in memory, until its request ends. */
export interface Carved {
  command: ReserveCommand;
  /** Whether its carve was sent to be stored (its lease was returned first): its end must then be stored too. */
  stored: boolean;
}

export interface Admitted {
  leaseId: string;
  carved: Carved;
  /** Tells the lease the request ended (its settlement or release is decided): nothing of it is left to store. */
  end(): void;
}

interface Scope {
  accountId: string;
  firstMonth: string;
  current?: Lease;
  next?: Promise<Lease | undefined>;
  windowStart: number;
  requests: number;
  admittedNanos: bigint;
  lastWindowNanos: bigint;
  largestNanos: bigint;
  noLeaseUntil: number;
}

/**
 * Spend leases, in memory: each (account, sub-account, tag) this instance serves steadily holds a lease, a durable
 * reservation of part of the scopes' headroom (granted by the budget decider at most a quarter of what is left).
 * A request whose worst case fits what is free in the lease is admitted here with no I/O; its hold is carved out of
 * the lease in memory and stored with its settlement (one event for the request), or on its own if the lease is
 * returned while the request still runs. The lease is renewed before it runs dry
 * and returned after its admission window, so the headroom an instance keeps aside is about two windows of its
 * own demand. Everything that counts against a cap (posted, held, leased) is durable before a request goes out,
 * except the carving of its hold from a lease, which is durable already as the lease.
 */
export class SpendLeases {
  private readonly scopes = new Map<string, Scope>();
  /** The scopes holding a lease, checked every IDLE_MS; the others are forgotten by the slower sweep. */
  private readonly leased = new Set<Scope>();
  private sweeper: NodeJS.Timeout | undefined;
  private sweeps = 0;

  constructor(
    private readonly ledger: BudgetLedger,
    private readonly holdTtlMs: number,
    /** The clock of expiry times (the decisions' clock); admission windows run on real time. */
    private readonly clock: () => Date,
    private readonly now: () => number = Date.now,
  ) {}

  /** Admits a request's worst case under a lease of its scopes, or says to hold it on its own (undefined). */
  async admit(
    accountId: string,
    firstMonth: string,
    limits: Limits,
    maxNanos: bigint,
    carve: Carve,
  ): Promise<Admitted | undefined> {
    if (maxNanos <= 0n) return undefined;
    // A lease is for one price too: a sub-account's models at another markup lease apart.
    const key = JSON.stringify([
      accountId,
      limits.subAccount?.id ?? null,
      limits.tag?.name ?? null,
      limits.subAccount?.price?.markupBasisPoints ?? null,
    ]);
    const scope = this.scope(key, accountId, firstMonth);
    const now = this.now();
    this.noteDemand(scope, maxNanos, now);
    const caps = capsOf(limits);
    const maxPrice = holdPrice(limits, maxNanos);
    const taken = this.take(scope, maxNanos, maxPrice, caps, now, carve);
    if (taken) {
      this.renewIfLow(scope, limits, maxNanos);
      return taken;
    }
    if (!scope.next) {
      if (scope.requests < DEMAND || now < scope.noLeaseUntil) return undefined;
      this.acquire(scope, limits, maxNanos);
    }
    // The first requests of a busy scope wait for its lease: one append, as a hold of their own would be.
    await scope.next;
    return this.take(scope, maxNanos, maxPrice, caps, this.now(), carve);
  }

  /** Returns every lease (a closing instance), so its headroom need not wait for the leases to expire. */
  async returnAll(): Promise<void> {
    const returns: Promise<unknown>[] = [];
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    for (const scope of this.scopes.values()) {
      const lease = scope.current;
      scope.current = undefined;
      if (lease) returns.push(this.release(scope, lease));
    }
    await Promise.allSettled(returns);
  }

  private scope(key: string, accountId: string, firstMonth: string): Scope {
    let scope = this.scopes.get(key);
    if (!scope) {
      scope = {
        accountId,
        firstMonth,
        windowStart: this.now(),
        requests: 0,
        admittedNanos: 0n,
        lastWindowNanos: 0n,
        largestNanos: 0n,
        noLeaseUntil: 0,
      };
      this.scopes.set(key, scope);
      this.startSweeping();
    }
    return scope;
  }

  private noteDemand(scope: Scope, maxNanos: bigint, now: number): void {
    if (now - scope.windowStart >= LEASE_ADMIT_MS) {
      scope.lastWindowNanos = scope.admittedNanos;
      scope.windowStart = now;
      scope.requests = 0;
      scope.admittedNanos = 0n;
      scope.largestNanos = 0n;
    }
    scope.requests += 1;
    scope.admittedNanos += maxNanos;
    if (maxNanos > scope.largestNanos) scope.largestNanos = maxNanos;
  }

  /** Takes the worst case out of the current lease; a lease that is too old, too small or under old caps is returned. */
  private take(
    scope: Scope,
    maxNanos: bigint,
    maxPrice: bigint,
    caps: string,
    now: number,
    carve: Carve,
  ): Admitted | undefined {
    const lease = scope.current;
    if (!lease) return undefined;
    const full = lease.freeNanos < maxNanos || lease.freePriceNanos < maxPrice;
    if (now >= lease.admitUntil || lease.caps !== caps || full) {
      scope.current = undefined;
      void this.release(scope, lease);
      return undefined;
    }
    lease.freeNanos -= maxNanos;
    lease.freePriceNanos -= maxPrice;
    lease.lastUsed = now;
    // Recorded in the same turn as the admission, so a return of the lease always sees it.
    const carved: Carved = { command: carve(lease.leaseId), stored: false };
    const holdId = carved.command.holdId;
    lease.outstanding.set(holdId, carved);
    return { leaseId: lease.leaseId, carved, end: () => lease.outstanding.delete(holdId) };
  }

  private renewIfLow(scope: Scope, limits: Limits, maxNanos: bigint): void {
    const lease = scope.current;
    if (!lease || scope.next || this.now() < scope.noLeaseUntil) return;
    const halfSpent = lease.freeNanos * 2n < lease.sizeNanos;
    const halfGone = lease.admitUntil - this.now() < LEASE_ADMIT_MS / 2;
    if (halfSpent || halfGone) this.acquire(scope, limits, maxNanos);
  }

  private acquire(scope: Scope, limits: Limits, maxNanos: bigint): void {
    const leaseId = `lease_${randomUUID().replaceAll('-', '')}`;
    const recent = scope.admittedNanos > scope.lastWindowNanos ? scope.admittedNanos : scope.lastWindowNanos;
    const largest = scope.largestNanos > maxNanos ? scope.largestNanos : maxNanos;
    const byRequests = WANT_REQUESTS * largest;
    const wantNanos = 2n * recent > byRequests ? 2n * recent : byRequests;
    const granted = this.ledger
      .submit(scope.accountId, scope.firstMonth, {
        type: 'Lease',
        leaseId,
        wantNanos,
        minNanos: LEAST_REQUESTS * largest,
        expiresAt: new Date(this.clock().getTime() + LEASE_ADMIT_MS + this.holdTtlMs).toISOString(),
        limits,
      })
      .then((decision) => {
        const event = decision.events.find((e) => e.type === 'SpendReserved');
        if (!event) {
          scope.noLeaseUntil = this.now() + REFUSED_BACKOFF_MS;
          return undefined;
        }
        const amount = BigInt(event.data.amountNanos);
        const lease: Lease = {
          leaseId,
          freeNanos: amount,
          freePriceNanos: BigInt(event.data.priceNanos ?? event.data.amountNanos),
          sizeNanos: amount,
          admitUntil: this.now() + LEASE_ADMIT_MS,
          lastUsed: this.now(),
          caps: capsOf(limits),
          outstanding: new Map(),
        };
        const previous = scope.current;
        scope.current = lease;
        this.leased.add(scope);
        if (previous) void this.release(scope, previous);
        return lease;
      })
      .catch(() => {
        scope.noLeaseUntil = this.now() + REFUSED_BACKOFF_MS;
        return undefined;
      })
      .finally(() => {
        if (scope.next === granted) scope.next = undefined;
      });
    scope.next = granted;
  }

  /**
   * Returns what is left of a lease. The holds carved from it whose requests are still running are stored first,
   * queued before the return: a carve decided after the return would find no lease, and its request would be
   * charged as an overrun of no hold. Those requests' settlements then find their holds stored. If a carve cannot
   * be stored (the store is away), the lease is kept: it counts against the caps until it expires, as a hold does,
   * and the settlements carry their carves into it.
   */
  private async release(scope: Scope, lease: Lease): Promise<unknown> {
    const carves = [...lease.outstanding.values()].map((carved) => {
      carved.stored = true;
      return this.ledger.submit(scope.accountId, scope.firstMonth, carved.command, { lazyMs: 0 });
    });
    try {
      await Promise.all(carves);
      return await this.ledger.submit(
        scope.accountId,
        scope.firstMonth,
        { type: 'Release', holdId: lease.leaseId, reason: 'returned' },
        { lazyMs: 0 },
      );
    } catch {
      // Not returned (the store is away): the lease counts against the caps until it expires.
      return undefined;
    }
  }

  /**
   * One timer for every scope (one per scope would, with many tags, be thousands of wake-ups a second): every
   * IDLE_MS it returns the leases past their window or unused that long; every 2 s it forgets scopes with no
   * traffic in the last two windows.
   */
  private startSweeping(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => {
      const now = this.now();
      for (const scope of this.leased) {
        const lease = scope.current;
        if (lease && (now >= lease.admitUntil || now - lease.lastUsed >= IDLE_MS)) {
          scope.current = undefined;
          void this.release(scope, lease);
        }
        if (!scope.current) this.leased.delete(scope);
      }
      if (++this.sweeps % 10 !== 0) return;
      for (const [key, scope] of this.scopes) {
        if (!scope.current && !scope.next && now - scope.windowStart >= 2 * LEASE_ADMIT_MS)
          this.scopes.delete(key);
      }
      if (this.scopes.size === 0) {
        clearInterval(this.sweeper);
        this.sweeper = undefined;
      }
    }, IDLE_MS);
    this.sweeper.unref();
  }
}

function capsOf(limits: Limits): string {
  const sub = limits.subAccount;
  return `${sub?.capNanos ?? '-'}/${sub?.reset ?? '-'}/${limits.tag?.capNanos ?? '-'}`;
}
