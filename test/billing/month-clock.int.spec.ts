import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Limits } from '../../commands/budget/decide.ts';
import { BudgetLedger } from '../../commands/budget/handler.ts';
import { budgetStream } from '../../events/budget.ts';
import type { Database } from '../../src/db/database.ts';
import type { PostgresEventStore } from '../../src/eventstore/postgres/store.ts';
import { testDatabase, testStore } from '../support/database.ts';

// An account opened in December by one instance; another instance's clock, a moment behind, still reads November
// 30th. Its spending belongs to the account's first month, not to a November opened after December from nothing.
const limits: Limits = {
  toppedUpNanos: 1_000_000n,
  balanceLowThresholdNanos: 0n,
  subAccount: null,
  tag: null,
};
let database: Database;
let store: PostgresEventStore;

beforeAll(async () => {
  database = await testDatabase();
  store = await testStore(database);
});
afterAll(async () => {
  await store.close();
  await database.close();
});

it('spends in the account’s first month when the clock reads a month before it', async () => {
  const accountId = `acct_behind_${Date.now()}`;
  const ahead = new BudgetLedger(store, () => new Date('2026-12-01T00:00:00.500Z'));
  const behind = new BudgetLedger(store, () => new Date('2026-11-30T23:59:59.900Z'));
  const reserve = (holdId: string) => ({
    type: 'Reserve' as const,
    holdId,
    requestId: holdId,
    minNanos: 1_000n,
    maxNanos: 1_000n,
    expiresAt: '2026-12-01T00:15:00.000Z',
    limits,
  });
  await ahead.submit(accountId, '2026-12', reserve('hold_ahead'));
  const decided = await behind.submit(accountId, '2026-12', reserve('hold_behind'));
  expect(decided.events.map((e) => e.type)).toEqual(['SpendReserved']);

  // Both holds are December's, and no November was opened for an account that did not exist then.
  const december = await store.readStream(budgetStream(accountId, '2026-12'));
  const held = december
    .filter((e) => e.type === 'SpendReserved')
    .map((e) => (e.data as { holdId: string }).holdId);
  expect(held).toEqual(['hold_ahead', 'hold_behind']);
  expect(await store.readStream(budgetStream(accountId, '2026-11'))).toEqual([]);
});
