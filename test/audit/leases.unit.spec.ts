import { describe, expect, it } from 'vitest';
import type { GatewayEvent } from '../../events/index.ts';
import { parseEvent } from '../../events/index.ts';
import { logicalEvents } from '../../events/logical.ts';
import { replayCaps } from '../../src/audit/caps.ts';
import { HoldBook } from '../../src/audit/holds.ts';
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

const reserved = (
  holdId: string,
  amount: bigint,
  kind: { lease?: true; leaseId?: string; tag?: string } = {},
) =>
  ({
    type: 'SpendReserved',
    data: {
      accountId: ACCOUNT,
      month: MONTH,
      holdId,
      requestId: `req_${holdId}`,
      amountNanos: amount.toString(),
      subAccountId: null,
      tag: kind.tag ?? null,
      expiresAt: '2026-03-10T13:00:00.000Z',
      ...(kind.lease && { lease: true }),
      ...(kind.leaseId && { leaseId: kind.leaseId }),
    },
  }) as GatewayEvent;

const released = (holdId: string, amount: bigint, reason: 'returned' | 'expired' | 'failed') =>
  ({
    type: 'SpendReleased',
    data: { accountId: ACCOUNT, month: MONTH, holdId, amountNanos: amount.toString(), reason },
  }) as GatewayEvent;

const settled = (holdId: string, held: bigint, charged: bigint) =>
  ({
    type: 'SpendSettled',
    data: {
      accountId: ACCOUNT,
      month: MONTH,
      holdId,
      requestId: `req_${holdId}`,
      subAccountId: null,
      tag: null,
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
  }) as GatewayEvent;

function audit(log: LogBuilder) {
  const holds = new HoldBook();
  for (const stored of log.events) {
    const parsed = parseEvent(stored);
    if (parsed.ok) for (const part of logicalEvents(parsed.event)) holds.apply(stored, part);
  }
  const finished = holds.finish(new Date('2026-03-10T12:30:00Z'));
  const failed = (findings: { kept: { severity: string; message: string }[] }) =>
    findings.kept.filter((f) => f.severity === 'failure').map((f) => f.message);
  return {
    holds: failed(holds.findings),
    caps: failed(replayCaps(log.events).findings),
    finished,
    book: holds,
  };
}

/** A served request stored as one event: its settlement carries its carve from the lease (events/logical.ts). */
const servedUnder = (leaseId: string, holdId: string, held: bigint, charged: bigint) => {
  const event = settled(holdId, held, charged) as Extract<GatewayEvent, { type: 'SpendSettled' }>;
  return {
    ...event,
    data: { ...event.data, reserved: { expiresAt: '2026-03-10T13:00:00.000Z', leaseId } },
  } as GatewayEvent;
};

describe('the audit of spend leases', () => {
  it('passes a log written both ways: carves stored apart (older logs) and carried by their settlements', () => {
    const log = new LogBuilder();
    opened(log, DOLLAR);
    log.append(BUDGET, reserved('lease_1', DOLLAR / 4n, { lease: true }));
    log.append(BUDGET, reserved('h1', DOLLAR / 10n, { leaseId: 'lease_1' }));
    log.append(BUDGET, settled('h1', DOLLAR / 10n, DOLLAR / 20n));
    log.append(BUDGET, servedUnder('lease_1', 'h2', DOLLAR / 10n, DOLLAR / 20n));
    log.append(BUDGET, released('lease_1', DOLLAR / 20n, 'returned'));
    const { holds, caps, finished } = audit(log);
    expect(holds).toEqual([]);
    expect(caps).toEqual([]);
    expect(finished).toMatchObject({ open: 0, openLeases: 0, total: 2 });
  });

  it('fails a settlement that carries a carve its lease cannot cover, or a carve of a lease that has ended', () => {
    const log = new LogBuilder();
    opened(log, DOLLAR);
    log.append(BUDGET, reserved('lease_1', DOLLAR / 10n, { lease: true }));
    log.append(BUDGET, servedUnder('lease_1', 'h1', DOLLAR / 5n, DOLLAR / 20n));
    log.append(BUDGET, released('lease_1', DOLLAR / 10n, 'returned'));
    log.append(BUDGET, servedUnder('lease_1', 'h2', DOLLAR / 100n, DOLLAR / 100n));
    const { holds } = audit(log);
    expect(holds).toEqual([
      expect.stringContaining(
        'hold h1 of $0.200000000 is carved from lease lease_1, which has $0.100000000 left',
      ),
      expect.stringContaining('lease lease_1 releases $0.100000000, but -$0.100000000 was left of it'),
      expect.stringContaining('hold h2 is carved from lease lease_1, which has ended'),
    ]);
  });

  it('passes a lease whose holds are carved from it, settled, and whose rest is returned', () => {
    const log = new LogBuilder();
    opened(log, DOLLAR);
    log.append(BUDGET, reserved('lease_1', DOLLAR / 4n, { lease: true }));
    log.append(BUDGET, reserved('h1', DOLLAR / 10n, { leaseId: 'lease_1' }));
    log.append(BUDGET, reserved('h2', DOLLAR / 10n, { leaseId: 'lease_1' }));
    // The rest of the balance (three quarters) is still free beside the lease: a hold of its own fits.
    log.append(BUDGET, reserved('h3', (DOLLAR * 3n) / 4n));
    log.append(BUDGET, settled('h1', DOLLAR / 10n, DOLLAR / 20n));
    log.append(BUDGET, released('h2', DOLLAR / 10n, 'failed'));
    log.append(BUDGET, released('lease_1', DOLLAR / 20n, 'returned'));
    const { holds, caps, finished, book } = audit(log);
    expect(holds).toEqual([]);
    expect(caps).toEqual([]);
    expect(finished).toMatchObject({ open: 1, openLeases: 0, total: 3 });
    expect([book.leases, book.carved]).toEqual([1, 2]);
  });

  it('counts the lease against the cap: a hold beside it that only fits without the lease fails', () => {
    const log = new LogBuilder();
    opened(log, DOLLAR);
    log.append(BUDGET, reserved('lease_1', DOLLAR / 4n, { lease: true }));
    log.append(BUDGET, reserved('h1', DOLLAR));
    expect(audit(log).caps).toEqual([
      expect.stringContaining('hold h1 of $1.000000000 exceeds the account balance'),
    ]);
  });

  it('fails a hold carved beyond what is left of its lease, or from a lease that has ended', () => {
    const log = new LogBuilder();
    opened(log, DOLLAR);
    log.append(BUDGET, reserved('lease_1', 100n, { lease: true }));
    log.append(BUDGET, reserved('h1', 60n, { leaseId: 'lease_1' }));
    log.append(BUDGET, reserved('h2', 60n, { leaseId: 'lease_1' }));
    log.append(BUDGET, released('lease_1', 40n, 'returned'));
    log.append(BUDGET, reserved('h3', 1n, { leaseId: 'lease_1' }));
    const { holds } = audit(log);
    expect(holds).toEqual([
      expect.stringContaining(
        'hold h2 of $0.000000060 is carved from lease lease_1, which has $0.000000040 left',
      ),
      // Returning 40 once 60 more were carved from it is returning more than is left (−20).
      expect.stringContaining('lease lease_1 releases $0.000000040, but -$0.000000020 was left of it'),
      expect.stringContaining('hold h3 is carved from lease lease_1, which has ended'),
    ]);
  });

  it('fails a lease that is settled, returned twice, or a plain hold that is “returned”', () => {
    const log = new LogBuilder();
    opened(log, DOLLAR);
    log.append(BUDGET, reserved('lease_1', 100n, { lease: true }));
    log.append(BUDGET, settled('lease_1', 100n, 100n));
    log.append(BUDGET, reserved('lease_2', 100n, { lease: true }));
    log.append(BUDGET, released('lease_2', 100n, 'returned'));
    log.append(BUDGET, released('lease_2', 100n, 'returned'));
    log.append(BUDGET, reserved('h1', 5n));
    log.append(BUDGET, released('h1', 5n, 'returned'));
    expect(audit(log).holds).toEqual([
      expect.stringContaining('lease lease_1 is settled; only the holds carved from it are'),
      expect.stringContaining('hold lease_2 is released a second time'),
      expect.stringContaining('hold h1 is returned, which only a lease is'),
    ]);
  });

  it('fails a lease left open long past its expiry (its instance crashed and nothing expired it)', () => {
    const log = new LogBuilder();
    opened(log, DOLLAR);
    log.append(BUDGET, reserved('lease_1', 100n, { lease: true }));
    const holds = new HoldBook();
    for (const stored of log.events) {
      const parsed = parseEvent(stored);
      if (parsed.ok) for (const part of logicalEvents(parsed.event)) holds.apply(stored, part);
    }
    expect(holds.finish(new Date('2026-03-10T14:00:00Z'))).toMatchObject({ openLeases: 1, open: 0 });
    expect(holds.findings.kept).toEqual([
      { severity: 'failure', message: expect.stringContaining('lease lease_1') },
    ]);
  });
});
