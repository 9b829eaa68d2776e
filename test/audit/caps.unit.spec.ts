import { describe, expect, it } from 'vitest';
import type { GatewayEvent } from '../../events/index.ts';
import { replayCaps } from '../../src/audit/caps.ts';
import { LogBuilder } from './log-builder.ts';

const ACCOUNT = 'acct_audit';
const MONTH = '2026-03';
const BUDGET = `budget-${ACCOUNT}_202603`;
const DOLLAR = 1_000_000_000n;

function opened(log: LogBuilder, toppedUp: bigint) {
  log.append(`account-${ACCOUNT}`, {
    type: 'AccountOpened',
    data: { accountId: ACCOUNT, name: 'Audited', rateLimitRpm: 600 },
  });
  log.append(`account-${ACCOUNT}`, {
    type: 'AccountToppedUp',
    data: { accountId: ACCOUNT, reference: 'pay_1', amountNanos: toppedUp.toString() },
  });
  log.append(BUDGET, {
    type: 'BudgetMonthOpened',
    data: {
      accountId: ACCOUNT,
      month: MONTH,
      lifetimeChargedNanos: '0',
      subAccountChargedNanos: {},
      openHolds: [],
    },
  });
}

function reserved(holdId: string, amount: bigint, scopes: { sub?: string; tag?: string } = {}): GatewayEvent {
  return {
    type: 'SpendReserved',
    data: {
      accountId: ACCOUNT,
      month: MONTH,
      holdId,
      requestId: `req_${holdId}`,
      amountNanos: amount.toString(),
      subAccountId: scopes.sub ?? null,
      tag: scopes.tag ?? null,
      expiresAt: '2026-03-10T13:00:00.000Z',
    },
  };
}

function settled(
  holdId: string,
  held: bigint,
  charged: bigint,
  scopes: { sub?: string; tag?: string } = {},
): GatewayEvent {
  return {
    type: 'SpendSettled',
    data: {
      accountId: ACCOUNT,
      month: MONTH,
      holdId,
      requestId: `req_${holdId}`,
      subAccountId: scopes.sub ?? null,
      tag: scopes.tag ?? null,
      heldNanos: held.toString(),
      chargedNanos: charged.toString(),
      releasedNanos: (held - charged).toString(),
      charge: {
        model: 'local/echo',
        provider: 'local',
        lines: [],
        passThroughNanos: '0',
        feeNanos: '0',
        discount: 'none',
        discountNanos: '0',
        usageReported: true,
        units: 0,
      },
    },
  };
}

function overran(holdId: string, amount: bigint, scopes: { sub?: string; tag?: string } = {}): GatewayEvent {
  return {
    type: 'SpendOverrun',
    data: {
      accountId: ACCOUNT,
      month: MONTH,
      holdId,
      requestId: `req_${holdId}`,
      subAccountId: scopes.sub ?? null,
      tag: scopes.tag ?? null,
      overrunNanos: amount.toString(),
    },
  };
}

function subAccount(log: LogBuilder, id: string, cap: bigint) {
  log.append(`subaccount-${id}`, {
    type: 'SubAccountCreated',
    data: {
      subAccountId: id,
      accountId: ACCOUNT,
      name: 'customer',
      externalRef: null,
      spendCapNanos: cap.toString(),
      rateLimitRpm: 60,
      defaultTag: null,
      keyId: `key_${id}`,
      keyHash: '0'.repeat(64),
      keyPrefix: 'sk-gw-sa',
    },
  });
}

const failures = (log: LogBuilder) =>
  replayCaps(log.events)
    .findings.kept.filter((f) => f.severity === 'failure')
    .map((f) => f.message);

describe('the caps replay (posted + pending ≤ limit at every reservation)', () => {
  it('passes an honest log where holds fit the balance', () => {
    const log = new LogBuilder();
    opened(log, DOLLAR);
    log.append(BUDGET, reserved('h1', DOLLAR / 2n));
    log.append(BUDGET, reserved('h2', DOLLAR / 2n));
    log.append(BUDGET, settled('h1', DOLLAR / 2n, DOLLAR / 4n));
    log.append(BUDGET, reserved('h3', DOLLAR / 4n));
    expect(failures(log)).toEqual([]);
  });

  it('detects a fabricated reservation beyond the balance, counting what other holds pend', () => {
    const log = new LogBuilder();
    opened(log, DOLLAR);
    log.append(BUDGET, reserved('h1', (DOLLAR * 6n) / 10n));
    const forged = log.append(BUDGET, reserved('h2', DOLLAR / 2n));
    const found = failures(log);
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(`${BUDGET}@${forged.revision}`);
    expect(found[0]).toContain('hold h2 of $0.500000000 exceeds the account balance');
    expect(found[0]).toContain('held $0.600000000 = $0.400000000');
  });

  it('holds a sub-account to the cap in force at the time, and a tag to its month budget', () => {
    const log = new LogBuilder();
    opened(log, 10n * DOLLAR);
    log.append('subaccount-sa_1', {
      type: 'SubAccountCreated',
      data: {
        subAccountId: 'sa_1',
        accountId: ACCOUNT,
        name: 'customer',
        externalRef: null,
        spendCapNanos: DOLLAR.toString(),
        rateLimitRpm: 60,
        defaultTag: null,
        keyId: 'key_sa_1',
        keyHash: '0'.repeat(64),
        keyPrefix: 'sk-gw-sa',
      },
    });
    log.append(`account-${ACCOUNT}`, {
      type: 'TagBudgetSet',
      data: { accountId: ACCOUNT, tag: 'campaign', capNanos: (2n * DOLLAR).toString() },
    });
    log.append(BUDGET, reserved('h1', DOLLAR, { sub: 'sa_1' }));
    log.append(BUDGET, settled('h1', DOLLAR, DOLLAR / 2n, { sub: 'sa_1' }));
    log.append('subaccount-sa_1', {
      type: 'SubAccountUpdated',
      data: { subAccountId: 'sa_1', accountId: ACCOUNT, spendCapNanos: (DOLLAR / 2n).toString() },
    });
    log.append(BUDGET, reserved('h2', 1n, { sub: 'sa_1' }));
    log.append(BUDGET, reserved('h3', 2n * DOLLAR, { tag: 'campaign' }));
    log.append(BUDGET, reserved('h4', 1n, { tag: 'campaign' }));
    const found = failures(log);
    expect(found).toHaveLength(2);
    expect(found[0]).toContain("hold h2 of $0.000000001 exceeds sub-account sa_1's cap: cap $0.500000000");
    expect(found[1]).toContain("hold h4 of $0.000000001 exceeds tag 'campaign' budget for 2026-03");
  });

  it('fails an overrun that spends past the balance, and the next reservation too', () => {
    const log = new LogBuilder();
    opened(log, DOLLAR);
    log.append(BUDGET, reserved('h1', DOLLAR));
    log.append(BUDGET, settled('h1', DOLLAR, DOLLAR));
    const overrun = log.append(BUDGET, overran('h1', 5n));
    expect(failures(log)).toEqual([
      `${BUDGET}@${overrun.revision}: overrun of $0.000000005 on hold h1 (request req_h1, billed beyond the hold) spends past account ${ACCOUNT}'s balance (top-ups $1.000000000, charged $1.000000005)`,
    ]);
    log.append(`account-${ACCOUNT}`, {
      type: 'AccountToppedUp',
      data: { accountId: ACCOUNT, reference: 'pay_2', amountNanos: '10' },
    });
    log.append(BUDGET, reserved('h2', 6n));
    expect(failures(log)).toEqual([
      expect.stringContaining('overrun of $0.000000005 on hold h1'),
      expect.stringContaining('balance: top-ups $1.000000010 − charged $1.000000005'),
    ]);
  });

  it("fails an overrun past a sub-account's cap or a tag's budget, and warns of one within every limit", () => {
    const log = new LogBuilder();
    opened(log, 10n * DOLLAR);
    subAccount(log, 'sa_1', DOLLAR);
    log.append(`account-${ACCOUNT}`, {
      type: 'TagBudgetSet',
      data: { accountId: ACCOUNT, tag: 'campaign', capNanos: DOLLAR.toString() },
    });
    log.append(BUDGET, reserved('h1', DOLLAR / 2n, { sub: 'sa_1' }));
    log.append(BUDGET, settled('h1', DOLLAR / 2n, DOLLAR / 2n, { sub: 'sa_1' }));
    log.append(BUDGET, overran('h1', DOLLAR / 4n, { sub: 'sa_1' }));
    expect(replayCaps(log.events).findings.kept).toEqual([
      { severity: 'warning', message: expect.stringContaining('overrun of $0.250000000 on hold h1') },
    ]);
    log.append(BUDGET, overran('h1', DOLLAR / 2n, { sub: 'sa_1' }));
    log.append(BUDGET, reserved('h2', DOLLAR, { tag: 'campaign' }));
    log.append(BUDGET, settled('h2', DOLLAR, DOLLAR, { tag: 'campaign' }));
    log.append(BUDGET, overran('h2', 1n, { tag: 'campaign' }));
    expect(failures(log)).toEqual([
      expect.stringContaining("sub-account sa_1's cap (cap $1.000000000, spent $1.250000000)"),
      expect.stringContaining("tag 'campaign' budget for 2026-03 (cap $1.000000000, spent $1.000000001)"),
    ]);
  });
});
