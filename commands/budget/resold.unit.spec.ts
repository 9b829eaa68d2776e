import { describe, expect, it } from 'vitest';
import type { BudgetEvent } from '../../events/budget.ts';
import { type BudgetCommand, decide, type Limits, type ReserveCommand } from './decide.ts';
import { costWithin, customerPrice } from './markup.ts';
import { evolve, initialState } from './state.ts';

// A sub-account resold at a markup (docs/billing.md, Reselling): its cap in its price, the balance and tag budgets in
// what the account pays, and caps that renew per UTC day, ISO week or budget month.

const charge = {
  model: 'local/echo',
  provider: 'local',
  lines: [],
  passThroughNanos: '0',
  feeNanos: '0',
  discount: 'none' as const,
  discountNanos: '0',
  usageReported: true,
  units: 1,
};
const book = (percent: number) => ({ markupBasisPoints: percent * 100, revision: 0 });
const sub = (
  capNanos: bigint,
  percent = 30,
  reset: 'daily' | 'weekly' | 'monthly' | null = null,
): Pick<Limits, 'subAccount'> => ({ subAccount: { id: 'sa_1', capNanos, reset, price: book(percent) } });
const limits = (over: Partial<Limits> = {}): Limits => ({
  toppedUpNanos: 1_000_000n,
  balanceLowThresholdNanos: 0n,
  subAccount: null,
  tag: null,
  today: '2026-03-10',
  ...over,
});
const opened = (
  month = '2026-03',
  carried: Partial<Extract<BudgetEvent, { type: 'BudgetMonthOpened' }>['data']> = {},
) =>
  ({
    type: 'BudgetMonthOpened',
    data: {
      accountId: 'a',
      month,
      lifetimeChargedNanos: '0',
      subAccountChargedNanos: {},
      openHolds: [],
      ...carried,
    },
  }) as BudgetEvent;
const reserve = (holdId: string, min: bigint, max: bigint, over: Partial<Limits> = {}): ReserveCommand => ({
  type: 'Reserve',
  holdId,
  requestId: `r-${holdId}`,
  minNanos: min,
  maxNanos: max,
  expiresAt: '2026-03-10T00:15:00.000Z',
  limits: limits(over),
});
const settle = (holdId: string, actual: bigint, over: Partial<Limits> = {}): BudgetCommand => ({
  type: 'Settle',
  holdId,
  requestId: `r-${holdId}`,
  actualNanos: actual,
  charge,
  limits: limits(over),
});

/** Decides each command in turn on the state the events before it make, and returns every event. */
function run(start: BudgetEvent[], ...commands: BudgetCommand[]): BudgetEvent[] {
  const events = [...start];
  for (const command of commands) events.push(...decide(command, events.reduce(evolve, initialState())));
  return events;
}
const ofType = <T extends BudgetEvent['type']>(events: BudgetEvent[], type: T) =>
  events.filter((e): e is Extract<BudgetEvent, { type: T }> => e.type === type);

describe('the customer’s price', () => {
  it('rounds up once, and its inverse is the most a price allows', () => {
    expect(customerPrice(5_040n, 3_000)).toBe(6_552n);
    expect(customerPrice(1n, 3_000)).toBe(2n);
    expect(customerPrice(10n, 0)).toBe(10n);
    for (const price of [1n, 2n, 999n, 1_000n, 1_300n, 123_457n]) {
      const cost = costWithin(price, 3_000);
      expect(customerPrice(cost, 3_000)).toBeLessThanOrEqual(price);
      expect(customerPrice(cost + 1n, 3_000)).toBeGreaterThan(price);
    }
  });
});

describe('budget decider: a sub-account at a markup', () => {
  it('holds in both moneys and binds the cap in the customer’s price', () => {
    const [held] = ofType(run([opened()], reserve('h1', 1n, 1_000n, sub(1_000n))), 'SpendReserved');
    // 769 × 1.3 = 999.7, priced 1,000: the most the account may pay under a cap of 1,000 in the customer's price.
    expect(held?.data).toMatchObject({
      amountNanos: '769',
      priceNanos: '1000',
      markupBasisPoints: 3_000,
      priceBookRevision: 0,
      day: '2026-03-10',
    });
    expect(
      ofType(run([opened(), held as BudgetEvent], reserve('h2', 1n, 1n, sub(1_000n))), 'SpendReserved'),
    ).toHaveLength(1);
  });

  it('charges price(cost), records the margin, and prices an overrun so that the two add up', () => {
    const events = run([opened()], reserve('h1', 769n, 769n, sub(10_000n)), settle('h1', 800n, sub(10_000n)));
    const [settled] = ofType(events, 'SpendSettled');
    const [overrun] = ofType(events, 'SpendOverrun');
    expect(settled?.data).toMatchObject({ chargedNanos: '769', priceNanos: '1000', marginNanos: '231' });
    // price(800) = 1,040: 40 of it is the overrun's, 9 of that the margin.
    expect(overrun?.data).toMatchObject({ overrunNanos: '31', priceNanos: '40', marginNanos: '9' });
  });

  it('settles at the hold’s price book, whatever the price book is when it settles', () => {
    const events = run(
      [opened()],
      reserve('h1', 100n, 100n, sub(10_000n, 30)),
      settle('h1', 100n, sub(10_000n, 100)),
    );
    expect(ofType(events, 'SpendSettled')[0]?.data).toMatchObject({
      priceNanos: '130',
      markupBasisPoints: 3_000,
    });
  });

  it('counts what the account pays against the balance and the tag budget', () => {
    const tag = { tag: { name: 'customers', capNanos: 1_000n } };
    const events = run(
      [opened()],
      reserve('h1', 1_000n, 1_000n, { ...sub(100_000n, 100), ...tag }),
      settle('h1', 1_000n, { ...sub(100_000n, 100), ...tag }),
    );
    expect(ofType(events, 'SpendSettled')[0]?.data).toMatchObject({
      chargedNanos: '1000',
      priceNanos: '2000',
    });
    // The tag's budget is spent (1,000 of 1,000) though the customer paid 2,000 and its cap has room.
    expect(
      ofType(run(events, reserve('h2', 1n, 1n, { ...sub(100_000n, 100), ...tag })), 'SpendReserved'),
    ).toHaveLength(1);
    const state = events.reduce(evolve, initialState());
    expect(state.lifetimeChargedNanos).toBe(1_000n);
    expect(state.subAccountCharged.get('sa_1')).toBe(2_000n);
  });

  it('carves from a lease only what fits both its cost and its price', () => {
    const lease: BudgetCommand = {
      type: 'Lease',
      leaseId: 'l1',
      wantNanos: 10n,
      minNanos: 1n,
      expiresAt: '2026-03-10T00:15:02.000Z',
      limits: limits(sub(1_000_000n)),
    };
    const carve = (n: number): BudgetCommand => ({
      ...reserve(`c${n}`, 1n, 1n, sub(1_000_000n)),
      leaseId: 'l1',
    });
    const events = run([opened()], lease, ...Array.from({ length: 8 }, (_, i) => carve(i)));
    const [granted, ...holds] = ofType(events, 'SpendReserved');
    expect(granted?.data).toMatchObject({ lease: true, amountNanos: '10', priceNanos: '13' });
    // Each carve of 1 is priced 2: six fit the lease's price of 13, the rest are holds of their own.
    expect(holds.filter((h) => h.data.leaseId === 'l1')).toHaveLength(6);
    expect(holds.filter((h) => h.data.leaseId === undefined)).toHaveLength(2);
  });
});

describe('budget decider: caps that renew', () => {
  it('renews a daily cap at the next UTC day, and not before', () => {
    const daily = (today: string) => ({ ...sub(1_300n, 30, 'daily'), today });
    const spent = run(
      [opened()],
      reserve('h1', 1_000n, 1_000n, daily('2026-03-10')),
      settle('h1', 1_000n, daily('2026-03-10')),
    );
    const refused = run(spent, reserve('h2', 1n, 1n, daily('2026-03-10')));
    expect(ofType(refused, 'SpendReserved')).toHaveLength(1);
    expect(ofType(refused, 'SubAccountSpendExceeded').map((e) => e.data.periodStart)).toEqual(['2026-03-10']);
    const renewed = run(refused, reserve('h3', 1_000n, 1_000n, daily('2026-03-11')));
    expect(ofType(renewed, 'SpendReserved').at(-1)?.data).toMatchObject({
      holdId: 'h3',
      amountNanos: '1000',
    });
  });

  it('keeps a week’s spending across the month’s end, and renews on Monday', () => {
    // 2026-03-30 is a Monday: the week runs on to Sunday 2026-04-05 in April's stream.
    const weekly = (today: string) => ({ ...sub(1_300n, 30, 'weekly'), today });
    const march = run(
      [opened()],
      reserve('h1', 1_000n, 1_000n, weekly('2026-03-30')),
      settle('h1', 1_000n, weekly('2026-03-30')),
      { type: 'CloseMonth' },
    );
    const [closed] = ofType(march, 'BudgetMonthClosed');
    expect(closed?.data.subAccountDayChargedNanos).toEqual({ sa_1: { '2026-03-30': '1300' } });
    const { subAccountChargedNanos, subAccountDayChargedNanos } = closed?.data ?? {};
    const april = [opened('2026-04', { subAccountChargedNanos, subAccountDayChargedNanos })];
    expect(ofType(run(april, reserve('h2', 1n, 1n, weekly('2026-04-02'))), 'SpendReserved')).toHaveLength(0);
    expect(ofType(run(april, reserve('h2', 1n, 1n, weekly('2026-04-06'))), 'SpendReserved')).toHaveLength(1);
  });

  it('renews a monthly cap with the budget month', () => {
    const monthly = sub(1_300n, 30, 'monthly');
    const march = run([opened()], reserve('h1', 1_000n, 1_000n, monthly), settle('h1', 1_000n, monthly));
    expect(ofType(run(march, reserve('h2', 1n, 1n, monthly)), 'SpendReserved')).toHaveLength(1);
    const april = [
      opened('2026-04', { lifetimeChargedNanos: '1000', subAccountChargedNanos: { sa_1: '1300' } }),
    ];
    const renewed = run(april, reserve('h2', 1n, 1n, { ...monthly, today: '2026-04-01' }));
    expect(ofType(renewed, 'SpendReserved')).toHaveLength(1);
  });
});
