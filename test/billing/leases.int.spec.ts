import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Limits } from '../../commands/budget/decide.ts';
import { BudgetLedger } from '../../commands/budget/handler.ts';
import { budgetStream, monthOf } from '../../events/budget.ts';
import { SpendLeases } from '../../src/billing/leases.ts';
import type { Database } from '../../src/db/database.ts';
import type { PostgresEventStore } from '../../src/eventstore/postgres/store.ts';
import { testDatabase, testStore } from '../support/database.ts';

const MONTH = monthOf(new Date());
const limits: Limits = {
  toppedUpNanos: 1_000_000n,
  balanceLowThresholdNanos: 0n,
  subAccount: null,
  tag: null,
};

describe('spend leases over the budget ledger', () => {
  let database: Database;
  let store: PostgresEventStore;
  beforeAll(async () => {
    database = await testDatabase();
    store = await testStore(database, { pollIntervalMs: 200 });
  });
  afterAll(async () => {
    await store.close();
    await database.close();
  });

  /** Admits as Spending does: the carve is made inside the admission, and kept in memory. */
  function admitter(leases: SpendLeases, accountId: string) {
    let n = 0;
    return (maxNanos: bigint) => {
      const holdId = `hold_${++n}`;
      return leases.admit(accountId, MONTH, limits, maxNanos, (leaseId) => ({
        type: 'Reserve',
        holdId,
        requestId: holdId,
        minNanos: maxNanos,
        maxNanos,
        expiresAt: new Date(Date.now() + 60_000).toISOString(),
        limits,
        leaseId,
      }));
    };
  }

  it('stores the carve of every hold still running before its lease is returned, even in the same turn', async () => {
    const accountId = `acct_${Date.now()}`;
    const ledger = new BudgetLedger(store);
    const leases = new SpendLeases(ledger, 60_000, () => new Date());
    const admit = admitter(leases, accountId);
    // Four requests make the scope busy enough to lease: the first three hold on their own, the fourth waits for
    // the lease and is admitted under it.
    const first = await Promise.all([admit(1_000n), admit(1_000n), admit(1_000n), admit(1_000n)]);
    expect(first.map((a) => a !== undefined)).toEqual([false, false, false, true]);
    // In one turn: one request fits what is left, the next does not and returns the lease.
    const [fits, misfit] = await Promise.all([admit(1_000n), admit(10_000_000n)]);
    expect(fits?.leaseId).toBeDefined();
    expect(misfit).toBeUndefined();
    await leases.returnAll();
    await new Promise((resolve) => setTimeout(resolve, 100));

    const events = await store.readStream(budgetStream(accountId, MONTH));
    const reserved = events
      .filter((e) => e.type === 'SpendReserved')
      .map((e) => e.data as Record<string, unknown>);
    const lease = reserved.find((d) => d.lease === true);
    const carved = reserved.filter((d) => d.leaseId === lease?.holdId);
    expect(carved.map((d) => d.holdId).sort()).toEqual(['hold_4', 'hold_5']);
    const returned = events.find((e) => e.type === 'SpendReleased');
    if (!returned) throw new Error('the lease was not returned');
    expect(returned.data).toMatchObject({ holdId: lease?.holdId, reason: 'returned' });
    const leased = BigInt(lease?.amountNanos as string);
    expect(BigInt((returned.data as { amountNanos: string }).amountNanos)).toBe(leased - 2_000n);
    // The return comes after every carve.
    const returnedAt = events.indexOf(returned);
    expect(
      events.findIndex(
        (e) => e.type === 'SpendReserved' && (e.data as { holdId: string }).holdId === 'hold_5',
      ),
    ).toBeLessThan(returnedAt);
  });

  it('stores nothing of a hold whose request ended before the return: its settlement carried its carve', async () => {
    const accountId = `acct_ended_${Date.now()}`;
    const ledger = new BudgetLedger(store);
    const leases = new SpendLeases(ledger, 60_000, () => new Date());
    const admit = admitter(leases, accountId);
    const admitted = await Promise.all([admit(1_000n), admit(1_000n), admit(1_000n), admit(1_000n)]);
    const [, , , leased] = admitted;
    if (!leased) throw new Error('the fourth request was not leased');
    const more = await admit(1_000n);
    if (!more) throw new Error('the fifth request was not leased');
    // hold_5's request ends first, its settlement carrying its carve; hold_4's still runs at the return.
    await ledger.submit(accountId, MONTH, {
      type: 'Settle',
      holdId: 'hold_5',
      requestId: 'hold_5',
      actualNanos: 400n,
      charge: {
        model: 'local/echo',
        provider: 'local',
        lines: [],
        passThroughNanos: '400',
        feeNanos: '0',
        discount: 'none',
        discountNanos: '0',
        usageReported: true,
        units: 1,
      },
      limits,
      carve: more.carved.command,
    });
    more.end();
    await leases.returnAll();
    const events = await store.readStream(budgetStream(accountId, MONTH));
    const carves = events
      .filter((e) => e.type === 'SpendReserved' && (e.data as { leaseId?: string }).leaseId !== undefined)
      .map((e) => (e.data as { holdId: string }).holdId);
    expect(carves).toEqual(['hold_4']);
    const settled = events.filter((e) => e.type === 'SpendSettled');
    expect(settled.map((e) => (e.data as { reserved?: { leaseId?: string } }).reserved?.leaseId)).toEqual([
      leased.leaseId,
    ]);
    // The lease gave back what neither hold took: hold_4's carve, and hold_5's whole carve left it too.
    const lease = events.find((e) => (e.data as { lease?: boolean }).lease === true);
    const returned = events.find((e) => e.type === 'SpendReleased');
    if (!lease || !returned) throw new Error('no lease, or it was not returned');
    expect(BigInt((returned.data as { amountNanos: string }).amountNanos)).toBe(
      BigInt((lease.data as { amountNanos: string }).amountNanos) - 2_000n,
    );
  });

  it('never leases more than a quarter of what is left, and leases nothing near the cap', async () => {
    const accountId = `acct_small_${Date.now()}`;
    const ledger = new BudgetLedger(store);
    const leases = new SpendLeases(ledger, 60_000, () => new Date());
    const small = { ...limits, toppedUpNanos: 15_000n };
    const admit = (maxNanos: bigint) =>
      leases.admit(accountId, MONTH, small, maxNanos, (leaseId) => ({
        type: 'Reserve',
        holdId: `hold_${maxNanos}`,
        requestId: 'r',
        minNanos: maxNanos,
        maxNanos,
        expiresAt: new Date(Date.now() + 60_000).toISOString(),
        limits: small,
        leaseId,
      }));
    // 15,000 left: a quarter (3,750) is below the least lease of four 1,000 requests, so none is granted.
    const admitted = await Promise.all([
      admit(1_000n),
      admit(1_000n),
      admit(1_000n),
      admit(1_000n),
      admit(1_000n),
    ]);
    expect(admitted.every((a) => a === undefined)).toBe(true);
    const events = await store.readStream(budgetStream(accountId, MONTH));
    expect(events.filter((e) => e.type === 'SpendReserved')).toEqual([]);
  });
});
