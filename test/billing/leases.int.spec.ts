import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Limits } from '../../commands/budget/decide.ts';
import { BudgetLedger } from '../../commands/budget/handler.ts';
import { budgetStream, monthOf } from '../../events/budget.ts';
import { SpendLeases } from '../../src/billing/leases.ts';
import type { Database } from '../../src/db/database.ts';
import { PostgresEventStore } from '../../src/eventstore/postgres/store.ts';
import { testDatabase } from '../support/database.ts';

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
    store = await PostgresEventStore.open({
      pool: database.pool,
      listenConfig: database.clientConfig,
      schema: database.schema,
      pollIntervalMs: 200,
    });
  });
  afterAll(async () => {
    await store.close();
    await database.close();
  });

  /** Admits as Spending does: the carve is queued from inside the admission. */
  function admitter(ledger: BudgetLedger, leases: SpendLeases, accountId: string) {
    let n = 0;
    return (maxNanos: bigint) => {
      const holdId = `hold_${++n}`;
      return leases.admit(accountId, MONTH, limits, maxNanos, (leaseId) => {
        let queued!: () => void;
        const enqueued = new Promise<void>((resolve) => {
          queued = resolve;
        });
        const stored = ledger
          .submit(
            accountId,
            MONTH,
            {
              type: 'Reserve',
              holdId,
              requestId: holdId,
              minNanos: maxNanos,
              maxNanos,
              expiresAt: new Date(Date.now() + 60_000).toISOString(),
              limits,
              leaseId,
            },
            { lazyMs: 20, onQueued: queued },
          )
          .then(() => {})
          .finally(queued);
        return { queued: enqueued, accounted: stored };
      });
    };
  }

  it('carves every admitted hold before its lease is returned, even when the return comes in the same turn', async () => {
    const accountId = `acct_${Date.now()}`;
    const ledger = new BudgetLedger(store);
    const leases = new SpendLeases(ledger, 60_000, () => new Date());
    const admit = admitter(ledger, leases, accountId);
    // Four requests make the scope busy enough to lease: the first three hold on their own, the fourth waits for
    // the lease and is admitted under it.
    const first = await Promise.all([admit(1_000n), admit(1_000n), admit(1_000n), admit(1_000n)]);
    expect(first.map((a) => a !== undefined)).toEqual([false, false, false, true]);
    // In one turn: one request fits what is left, the next does not and returns the lease.
    const [fits, misfit] = await Promise.all([admit(1_000n), admit(10_000_000n)]);
    expect(fits?.leaseId).toBeDefined();
    expect(misfit).toBeUndefined();
    await Promise.all([fits?.carved, ...first.map((a) => a?.carved)]);
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

  it('never leases more than a quarter of what is left, and leases nothing near the cap', async () => {
    const accountId = `acct_small_${Date.now()}`;
    const ledger = new BudgetLedger(store);
    const leases = new SpendLeases(ledger, 60_000, () => new Date());
    const small = { ...limits, toppedUpNanos: 15_000n };
    const admit = (maxNanos: bigint) =>
      leases.admit(accountId, MONTH, small, maxNanos, () => ({
        queued: Promise.resolve(),
        accounted: Promise.resolve(),
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
