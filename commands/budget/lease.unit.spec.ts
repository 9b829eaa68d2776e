import { describe, expect, it } from 'vitest';
import type { BudgetEvent } from '../../events/budget.ts';
import { logicalEvents } from '../../events/logical.ts';
import { type BudgetCommand, decide, headrooms, type Limits } from './decide.ts';
import { type BudgetState, evolve, initialState } from './state.ts';

const limits = (over: Partial<Limits> = {}): Limits => ({
  toppedUpNanos: 10_000n,
  balanceLowThresholdNanos: 0n,
  subAccount: null,
  tag: null,
  ...over,
});
const opened: BudgetEvent = {
  type: 'BudgetMonthOpened',
  data: {
    accountId: 'a',
    month: '2026-03',
    lifetimeChargedNanos: '0',
    subAccountChargedNanos: {},
    openHolds: [],
  },
};
const lease = (leaseId: string, want: bigint, min: bigint, over: Partial<Limits> = {}): BudgetCommand => ({
  type: 'Lease',
  leaseId,
  wantNanos: want,
  minNanos: min,
  expiresAt: '2026-03-10T00:15:02.000Z',
  limits: limits(over),
});
const carve = (
  holdId: string,
  leaseId: string,
  amount: bigint,
  over: Partial<Limits> = {},
): BudgetCommand => ({
  type: 'Reserve',
  holdId,
  requestId: `r-${holdId}`,
  minNanos: amount,
  maxNanos: amount,
  expiresAt: '2026-03-10T00:15:00.000Z',
  limits: limits(over),
  leaseId,
});

/** Decides each command against the state the ones before it left, as the stream's writer does. */
function run(commands: BudgetCommand[], state: BudgetState = evolve(initialState(), opened)) {
  const events: BudgetEvent[] = [];
  for (const command of commands) {
    const decided = decide(command, state);
    for (const event of decided) evolve(state, event);
    events.push(...decided);
  }
  return { events, state };
}

describe('budget decider: spend leases', () => {
  it('grants what is wanted, but never more than a quarter of the tightest headroom', () => {
    const { events } = run([lease('l1', 1_000n, 100n), lease('l2', 5_000n, 100n)]);
    expect(events.map((e) => e.data)).toMatchObject([
      { holdId: 'l1', amountNanos: '1000', lease: true },
      // 10,000 − 1,000 leased = 9,000; a quarter is 2,250.
      { holdId: 'l2', amountNanos: '2250', lease: true },
    ]);
  });

  it('grants nothing (no refusal, no notice) when a quarter of the headroom is below the least wanted', () => {
    const capped = { subAccount: { id: 'sa', capNanos: 399n } };
    expect(run([lease('l1', 1_000n, 100n, capped)]).events).toEqual([]);
  });

  it('counts against every scope it names, as a hold does', () => {
    const scopes = { subAccount: { id: 'sa', capNanos: 4_000n }, tag: { name: 't', capNanos: 2_000n } };
    const { state } = run([lease('l1', 10_000n, 1n, scopes)]);
    expect(headrooms(state, limits(scopes)).map((h) => h.remainingNanos)).toEqual([9_500n, 3_500n, 1_500n]);
  });

  it('carves holds out of the lease without changing what the scopes have left', () => {
    const scopes = { tag: { name: 't', capNanos: 4_000n } };
    const { state: before } = run([lease('l1', 800n, 1n, scopes)]);
    const left = headrooms(before, limits(scopes)).map((h) => h.remainingNanos);
    const { events, state } = run([carve('h1', 'l1', 300n, scopes), carve('h2', 'l1', 500n, scopes)], before);
    expect(events.map((e) => e.data)).toMatchObject([
      { holdId: 'h1', amountNanos: '300', leaseId: 'l1', tag: 't' },
      { holdId: 'h2', amountNanos: '500', leaseId: 'l1', tag: 't' },
    ]);
    expect(headrooms(state, limits(scopes)).map((h) => h.remainingNanos)).toEqual(left);
    expect(state.holds.get('l1')?.amountNanos).toBe(0n);
  });

  it('decides a hold its lease cannot cover (other scopes, too little left, returned) as a hold of its own', () => {
    // One state throughout: the holds below are not carved, so the lease keeps its 500.
    const { state } = run([lease('l1', 500n, 1n)]);
    const tagged = run([carve('h1', 'l1', 100n, { tag: { name: 'x', capNanos: null } })], state).events;
    expect(tagged[0]?.data).not.toHaveProperty('leaseId');
    const large = run([carve('h2', 'l1', 600n)], state).events;
    expect(large[0]?.data).toMatchObject({ holdId: 'h2', amountNanos: '600' });
    expect(large[0]?.data).not.toHaveProperty('leaseId');
    const returned = run(
      [{ type: 'Release', holdId: 'l1', reason: 'returned' }, carve('h3', 'l1', 100n)],
      state,
    );
    expect(returned.events[0]?.data).toMatchObject({ holdId: 'l1', amountNanos: '500', reason: 'returned' });
    expect(returned.events[1]?.data).not.toHaveProperty('leaseId');
  });

  it('returns what is left of a lease, and expires a lease like a hold', () => {
    const { state } = run([lease('l1', 1_000n, 1n), carve('h1', 'l1', 300n)]);
    const expired = run([{ type: 'ExpireHolds', now: new Date('2026-03-10T00:16:00Z') }], state).events;
    expect(expired.map((e) => e.data)).toMatchObject([
      { holdId: 'l1', amountNanos: '700', reason: 'expired' },
      { holdId: 'h1', amountNanos: '300', reason: 'expired' },
    ]);
  });

  it('settles a hold whose carve was never stored by carving it first, and only once', () => {
    const settle = (holdId: string, carved: BudgetCommand): BudgetCommand => ({
      type: 'Settle',
      holdId,
      requestId: `r-${holdId}`,
      actualNanos: 200n,
      charge: {
        model: 'local/echo',
        provider: 'local',
        lines: [],
        passThroughNanos: '0',
        feeNanos: '0',
        discount: 'none',
        discountNanos: '0',
        usageReported: true,
        units: 1,
      },
      limits: limits(),
      carve: carved as Extract<BudgetCommand, { type: 'Reserve' }>,
    });
    const { state } = run([lease('l1', 1_000n, 1n)]);
    const lost = run([settle('h1', carve('h1', 'l1', 300n))], state).events;
    // One event: the settlement carries the carve it ends, and stands for both.
    expect(lost.map((e) => [e.type, e.data])).toMatchObject([
      [
        'SpendSettled',
        {
          holdId: 'h1',
          heldNanos: '300',
          chargedNanos: '200',
          releasedNanos: '100',
          reserved: { leaseId: 'l1' },
        },
      ],
    ]);
    expect(lost.flatMap(logicalEvents).map((e) => [e.type, e.data])).toMatchObject([
      ['SpendReserved', { holdId: 'h1', leaseId: 'l1', amountNanos: '300' }],
      ['SpendSettled', { holdId: 'h1', heldNanos: '300', chargedNanos: '200', releasedNanos: '100' }],
    ]);
    expect(state.holds.get('l1')?.amountNanos).toBe(700n);
    const stored = run([carve('h2', 'l1', 300n), settle('h2', carve('h2', 'l1', 300n))], state).events;
    expect(stored.map((e) => e.type)).toEqual(['SpendReserved', 'SpendSettled']);
    expect(state.holds.get('l1')?.amountNanos).toBe(400n);

    // A carve its lease can no longer cover (returned) is held on its own against the scopes, not overrun.
    run([{ type: 'Release', holdId: 'l1', reason: 'returned' }], state);
    const late = run([settle('h3', carve('h3', 'l1', 300n))], state).events;
    expect(late.map((e) => e.type)).toEqual(['SpendSettled']);
    expect(late[0]?.data).toMatchObject({ heldNanos: '300', chargedNanos: '200', reserved: {} });
    const reserved = (late[0]?.data as { reserved?: { leaseId?: string } } | undefined)?.reserved;
    expect(reserved?.leaseId).toBeUndefined();
  });

  it('carries a lease into the next month at what is left of it', () => {
    const { state } = run([lease('l1', 1_000n, 1n), carve('h1', 'l1', 250n)]);
    const closed = decide({ type: 'CloseMonth' }, state)[0];
    if (closed?.type !== 'BudgetMonthClosed') throw new Error('the month did not close');
    const carried = closed.data.openHolds;
    expect(carried).toEqual([
      expect.objectContaining({ holdId: 'l1', amountNanos: '750', lease: true }),
      expect.objectContaining({ holdId: 'h1', amountNanos: '250', leaseId: 'l1' }),
    ]);
  });
});
