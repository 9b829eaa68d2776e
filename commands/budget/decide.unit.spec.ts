import { describe, expect, it } from 'vitest';
import type { BudgetEvent } from '../../events/budget.ts';
import { logicalEvents } from '../../events/logical.ts';
import { type BudgetCommand, decide, type Limits, MonthUnavailable } from './decide.ts';
import { evolve, initialState } from './state.ts';

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
const limits = (over: Partial<Limits> = {}): Limits => ({
  toppedUpNanos: 1_000n,
  balanceLowThresholdNanos: 100n,
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
const reserved = (
  holdId: string,
  amount: number,
  extra: { subAccountId?: string; tag?: string } = {},
): BudgetEvent => ({
  type: 'SpendReserved',
  data: {
    accountId: 'a',
    month: '2026-03',
    holdId,
    requestId: `r-${holdId}`,
    amountNanos: String(amount),
    subAccountId: extra.subAccountId ?? null,
    tag: extra.tag ?? null,
    expiresAt: '2026-03-10T00:15:00.000Z',
  },
});
const reserve = (holdId: string, min: bigint, max: bigint, over: Partial<Limits> = {}): BudgetCommand => ({
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

function given(events: BudgetEvent[]) {
  const state = events.reduce(evolve, initialState());
  return { when: (command: BudgetCommand) => decide(command, state), state };
}

describe('budget decider: reserve', () => {
  it('holds the worst case when every scope allows it', () => {
    expect(given([opened]).when(reserve('h1', 300n, 300n))).toEqual([reserved('h1', 300)]);
  });

  it('grants as much as the tightest scope allows between the minimum and the worst case', () => {
    const events = given([opened, reserved('h0', 800)]).when(reserve('h1', 50n, 500n));
    expect(events).toEqual([reserved('h1', 200)]);
  });

  it('refuses below the minimum, and raises balance.exhausted once when the balance is nearly gone', () => {
    // Most of the balance is only held: a refusal, but no notice.
    expect(given([opened, reserved('h0', 950)]).when(reserve('h1', 100n, 100n))).toEqual([]);
    const spent = [opened, reserved('h0', 950)];
    const history = [...spent, ...given(spent).when(settle('h0', 950n))];
    const refused = given(history).when(reserve('h1', 100n, 100n));
    expect(refused).toEqual([
      { type: 'BalanceExhausted', data: { accountId: 'a', month: '2026-03', balanceNanos: '50' } },
    ]);
    expect(given([...history, ...refused]).when(reserve('h2', 100n, 100n))).toEqual([]);
  });

  it('counts posted and pending spending against a sub-account cap', () => {
    const sub = { subAccount: { id: 'sa_1', capNanos: 500n } };
    const history = [opened, reserved('h0', 300, { subAccountId: 'sa_1' })];
    expect(given(history).when(reserve('h1', 250n, 250n, sub))).toEqual([]);
    expect(given(history).when(reserve('h1', 200n, 200n, sub))).toEqual([
      reserved('h1', 200, { subAccountId: 'sa_1' }),
    ]);
  });

  it('raises subaccount.spend.exceeded on a refusal once 90% of the cap is spent', () => {
    const sub = { subAccount: { id: 'sa_1', capNanos: 500n } };
    const roomy = { subAccount: { id: 'sa_1', capNanos: 1000n } };
    const spent = [opened, reserved('h0', 460, { subAccountId: 'sa_1' })];
    const history = [...spent, ...given(spent).when(settle('h0', 460n, roomy))];
    expect(given(history).when(reserve('h1', 50n, 50n, sub))).toEqual([
      {
        type: 'SubAccountSpendExceeded',
        data: { accountId: 'a', month: '2026-03', subAccountId: 'sa_1', capNanos: '500', spentNanos: '460' },
      },
    ]);
  });

  it('applies a tag budget only to its own tag', () => {
    const tag = { tag: { name: 'x', capNanos: 100n } };
    expect(given([opened]).when(reserve('h1', 150n, 150n, tag))).toEqual([]);
    expect(given([opened]).when(reserve('h1', 150n, 150n, { tag: { name: 'y', capNanos: null } }))).toEqual([
      reserved('h1', 150, { tag: 'y' }),
    ]);
  });

  it('holds a free call at zero, even with nothing left', () => {
    const spent = [opened, reserved('h0', 1000)];
    expect(given(spent).when(reserve('h1', 0n, 0n))).toEqual([reserved('h1', 0)]);
  });

  it('ignores a reservation repeated with the same hold id', () => {
    expect(given([opened, reserved('h1', 10)]).when(reserve('h1', 10n, 10n))).toEqual([]);
  });

  it('refuses everything before the month is opened and after it is closed', () => {
    expect(() => given([]).when(reserve('h1', 1n, 1n))).toThrow(MonthUnavailable);
    const closed = given([opened]).when({ type: 'CloseMonth' });
    expect(() => given([opened, ...closed]).when(reserve('h1', 1n, 1n))).toThrow(/closed/);
  });
});

describe('budget decider: settle, release, expire', () => {
  it('posts the actual cost and releases the rest of the hold', () => {
    const [settled] = given([opened, reserved('h1', 300)]).when(settle('h1', 120n));
    expect(settled).toMatchObject({
      type: 'SpendSettled',
      data: { holdId: 'h1', heldNanos: '300', chargedNanos: '120', releasedNanos: '180' },
    });
  });

  it('records what the provider billed beyond the hold as an overrun, never dropping it', () => {
    const events = given([opened, reserved('h1', 300)]).when(settle('h1', 350n, { toppedUpNanos: 10_000n }));
    expect(events.map((e) => e.type)).toEqual(['SpendSettled', 'SpendOverrun']);
    expect(events[1]?.data).toMatchObject({ overrunNanos: '50' });
    const state = given([opened, reserved('h1', 300), ...events]).state;
    expect(state.lifetimeChargedNanos).toBe(350n);
  });

  it('charges a settle that arrives after its hold expired, and ignores a repeated settle', () => {
    const expired = given([opened, reserved('h1', 300)]).when({
      type: 'ExpireHolds',
      now: new Date('2026-03-10T01:00:00Z'),
    });
    expect(expired).toMatchObject([
      { type: 'SpendReleased', data: { holdId: 'h1', reason: 'expired', amountNanos: '300' } },
    ]);
    const late = given([opened, reserved('h1', 300), ...expired]).when(settle('h1', 120n));
    expect(late.map((e) => e.type)).toEqual(['SpendSettled', 'SpendOverrun']);
    expect(late[1]?.data).toMatchObject({ overrunNanos: '120' });
    const once = given([opened, reserved('h2', 300)]);
    const first = once.when(settle('h2', 100n));
    expect(given([opened, reserved('h2', 300), ...first]).when(settle('h2', 100n))).toEqual([]);
  });

  it('releases a failed request’s hold once', () => {
    const released = given([opened, reserved('h1', 300)]).when({
      type: 'Release',
      holdId: 'h1',
      reason: 'failed',
    });
    expect(released).toMatchObject([
      { type: 'SpendReleased', data: { reason: 'failed', amountNanos: '300' } },
    ]);
    expect(
      given([opened, reserved('h1', 300), ...released]).when({
        type: 'Release',
        holdId: 'h1',
        reason: 'failed',
      }),
    ).toEqual([]);
  });

  it('keeps unexpired holds when expiring', () => {
    expect(
      given([opened, reserved('h1', 300)]).when({
        type: 'ExpireHolds',
        now: new Date('2026-03-10T00:00:00Z'),
      }),
    ).toEqual([]);
  });

  it('raises balance.low when a settlement leaves less than the threshold, once a month', () => {
    const events = given([opened, reserved('h1', 950)]).when(settle('h1', 950n));
    expect(events.map((e) => e.type)).toEqual(['SpendSettled', 'BalanceLowReached']);
    expect(events[1]?.data).toMatchObject({ balanceNanos: '50', thresholdNanos: '100' });
  });

  it('raises a tag’s 80% and 100% thresholds as spending crosses them', () => {
    const tag = { tag: { name: 't', capNanos: 100n } };
    const history = [opened, reserved('h1', 90, { tag: 't' })];
    const events = given(history).when(settle('h1', 85n, tag));
    expect(events.filter((e) => e.type === 'TagUsageThresholdExceeded').map((e) => e.data)).toEqual([
      expect.objectContaining({ tag: 't', thresholdPercent: 80, spentNanos: '85' }),
    ]);
  });
});

describe('budget decider: months', () => {
  it('opens a month once with what it carries, and closes it with what it passes on', () => {
    const carried = {
      lifetimeChargedNanos: 40n,
      subAccountChargedNanos: new Map([['sa', 7n]]),
      openHolds: [],
    };
    const open = given([]).when({ type: 'OpenMonth', accountId: 'a', month: '2026-04', carried });
    expect(open).toEqual([
      {
        type: 'BudgetMonthOpened',
        data: {
          accountId: 'a',
          month: '2026-04',
          lifetimeChargedNanos: '40',
          subAccountChargedNanos: { sa: '7' },
          openHolds: [],
        },
      },
    ]);
    expect(given(open).when({ type: 'OpenMonth', accountId: 'a', month: '2026-04', carried })).toEqual([]);
    const closed = given([...open, reserved('h1', 5, { subAccountId: 'sa' })]).when({ type: 'CloseMonth' });
    expect(closed[0]?.data).toMatchObject({
      lifetimeChargedNanos: '40',
      subAccountChargedNanos: { sa: '7' },
    });
    expect((closed[0]?.data as { openHolds: unknown[] } | undefined)?.openHolds).toHaveLength(1);
  });
});

describe('budget decider: the request log', () => {
  const request = {
    logId: 'rlog_1',
    requestId: 'r-h1',
    accountId: 'a',
    subAccountId: null,
    keyId: 'key_1',
    tag: null,
    endpoint: '/v1/chat/completions',
    requestedModel: 'local/echo',
    model: 'local/echo',
    provider: 'local',
    status: 200,
    errorType: null,
    stream: false,
    usage: null,
    costNanos: '500',
    holdId: 'h1',
    firstByteMs: 3,
    totalMs: 3,
    attempts: 1,
    fallbacks: 0,
    cacheStatus: null,
    routing: null,
    requestSha256: 'a'.repeat(64),
    responseSha256: 'b'.repeat(64),
    bodiesKept: true,
    at: '2026-03-10T00:00:00.000Z',
  };

  it('decides the request record with the settlement, so both go in one append, and only once', () => {
    const { when, state } = given([opened, reserved('h1', 1000)]);
    const events = when({ ...(settle('h1', 500n) as object), request } as BudgetCommand);
    // One event, which stands for the settlement and the record.
    expect(events.map((e) => e.type)).toEqual(['SpendSettled']);
    const parts = events.flatMap(logicalEvents);
    expect(parts.map((e) => e.type)).toEqual(['SpendSettled', 'RequestCompleted']);
    expect(parts[1]?.data).toEqual({ ...request, month: '2026-03' });
    const after = events.reduce(evolve, state);
    expect(decide({ ...(settle('h1', 500n) as object), request } as BudgetCommand, after)).toEqual([]);
  });

  it('logs a request that settled nothing on its own, changing no balance', () => {
    const { when, state } = given([opened]);
    const events = when({ type: 'LogRequest', request: { ...request, status: 404, costNanos: '0' } });
    expect(events).toEqual([
      { type: 'RequestCompleted', data: { ...request, status: 404, costNanos: '0', month: '2026-03' } },
    ]);
    expect(events.reduce(evolve, state).lifetimeChargedNanos).toBe(0n);
  });
});

describe('budget decider: a charge of a known amount (a cached answer)', () => {
  const known = (holdId: string, amount: bigint, over: Partial<Limits> = {}): BudgetCommand => ({
    type: 'Charge',
    holdId,
    requestId: `r-${holdId}`,
    chargedNanos: amount,
    charge: { ...charge, discount: 'cache' },
    expiresAt: '2026-03-10T00:00:00.000Z',
    limits: limits(over),
  });

  it('holds and settles the whole amount in one decision', () => {
    const stored = given([opened]).when(known('c1', 300n));
    // Stored as one event, standing for the hold and its settlement.
    expect(stored.map((e) => e.type)).toEqual(['SpendSettled']);
    const events = stored.flatMap(logicalEvents);
    expect(events.map((e) => e.type)).toEqual(['SpendReserved', 'SpendSettled']);
    expect(events[0]?.data).toMatchObject({ holdId: 'c1', amountNanos: '300' });
    expect(events[1]?.data).toMatchObject({
      holdId: 'c1',
      heldNanos: '300',
      chargedNanos: '300',
      releasedNanos: '0',
    });
    const after = events.reduce(evolve, given([opened]).state);
    expect(after.lifetimeChargedNanos).toBe(300n);
    expect(after.holds.size).toBe(0);
  });

  it('refuses when any scope lacks room for the whole amount, as a reservation would', () => {
    const capped = { subAccount: { id: 's', capNanos: 500n } };
    const { when } = given([opened, reserved('h1', 300, { subAccountId: 's' })]);
    expect(when(known('c2', 300n, capped)).some((e) => e.type === 'SpendSettled')).toBe(false);
    expect(when(known('c3', 200n, capped)).map((e) => e.type)).toContain('SpendSettled');
    expect(
      given([opened])
        .when(known('c4', 1_001n))
        .some((e) => e.type === 'SpendSettled'),
    ).toBe(false);
  });

  it('charges once for a repeated hold id', () => {
    const first = given([opened]).when(known('c5', 10n));
    expect(given([opened, ...first]).when(known('c5', 10n))).toEqual([]);
  });
});
