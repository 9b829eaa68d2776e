import { describe, expect, it } from 'vitest';
import type { AccountEvent } from '../../events/account.ts';
import { DomainError } from '../errors.ts';
import { type AccountCommand, decide, type NewKey } from './decide.ts';
import { evolve, initialState } from './state.ts';

const key: NewKey = { keyId: 'key_1', keyHash: 'a'.repeat(64), keyPrefix: 'sk-gw-abcdef' };
const opened: AccountEvent[] = [
  { type: 'AccountOpened', data: { accountId: 'acct_1', name: 'Acme', rateLimitRpm: 600 } },
  { type: 'ApiKeyIssued', data: { ...key, accountId: 'acct_1' } },
];

/** Given past events, when a command, then new events (or a refusal). */
function given(events: AccountEvent[]) {
  const state = events.reduce(evolve, initialState());
  return { when: (command: AccountCommand) => () => decide(command, state) };
}

describe('account decider', () => {
  it('opens an account with its first key', () => {
    const then = given([]).when({
      type: 'OpenAccount',
      accountId: 'acct_1',
      name: 'Acme',
      rateLimitRpm: 600,
      key,
    });
    expect(then()).toEqual(opened);
  });

  it('opens an account with a credit in the same append when asked (the demo account)', () => {
    const then = given([]).when({
      type: 'OpenAccount',
      accountId: 'acct_1',
      name: 'Acme',
      rateLimitRpm: 600,
      key,
      initialTopUp: { reference: 'demo-credit', amountNanos: 5_000_000_000n },
    });
    expect(then()).toEqual([
      ...opened,
      {
        type: 'AccountToppedUp',
        data: { accountId: 'acct_1', reference: 'demo-credit', amountNanos: '5000000000' },
      },
    ]);
  });

  it('refuses to open an account twice, or with a blank name', () => {
    const again = given(opened).when({
      type: 'OpenAccount',
      accountId: 'acct_1',
      name: 'X',
      rateLimitRpm: 1,
      key,
    });
    expect(again).toThrow(DomainError);
    const blank = given([]).when({
      type: 'OpenAccount',
      accountId: 'acct_2',
      name: ' ',
      rateLimitRpm: 1,
      key,
    });
    expect(blank).toThrow(/name/);
  });

  it('issues further keys only on an existing account', () => {
    const second = { ...key, keyId: 'key_2' };
    expect(given(opened).when({ type: 'IssueKey', key: second })()).toEqual([
      { type: 'ApiKeyIssued', data: { ...second, accountId: 'acct_1', name: 'default', expiresAt: null } },
    ]);
    const named = {
      type: 'IssueKey' as const,
      key: second,
      name: 'ci',
      expiresAt: '2027-01-01T00:00:00.000Z',
    };
    expect(given(opened).when(named)()).toEqual([
      {
        type: 'ApiKeyIssued',
        data: { ...second, accountId: 'acct_1', name: 'ci', expiresAt: named.expiresAt },
      },
    ]);
    expect(given(opened).when({ ...named, name: ' ' })).toThrow(/name must not be empty/);
    expect(given([]).when({ type: 'IssueKey', key: second })).toThrow(/account not found/);
  });

  it('rotates a key: the new one takes its name and expiry, the old one ends with the grace period', () => {
    const second = { ...key, keyId: 'key_2' };
    const now = '2026-05-01T00:00:00.000Z';
    const rotation = {
      type: 'RotateKey' as const,
      key: second,
      keyId: 'key_1',
      now,
      graceEndsAt: '2026-05-01T01:00:00.000Z',
    };
    const events = given(opened).when(rotation)();
    expect(events).toEqual([
      { type: 'ApiKeyIssued', data: { ...second, accountId: 'acct_1', name: 'default', expiresAt: null } },
      {
        type: 'ApiKeyRotated',
        data: { keyId: 'key_1', accountId: 'acct_1', replacedBy: 'key_2', expiresAt: rotation.graceEndsAt },
      },
    ]);
    // A key that ends before the grace would keeps its own end; an ended one cannot be rotated, a revoked one is gone.
    const soon: AccountEvent = {
      type: 'ApiKeyIssued',
      data: {
        ...second,
        keyId: 'key_3',
        accountId: 'acct_1',
        name: 'ci',
        expiresAt: '2026-05-01T00:10:00.000Z',
      },
    };
    const third = { ...rotation, keyId: 'key_3', key: { ...key, keyId: 'key_4' } };
    expect(given([...opened, soon]).when(third)()).toEqual([
      {
        type: 'ApiKeyIssued',
        data: { ...third.key, accountId: 'acct_1', name: 'ci', expiresAt: soon.data.expiresAt },
      },
      {
        type: 'ApiKeyRotated',
        data: { keyId: 'key_3', accountId: 'acct_1', replacedBy: 'key_4', expiresAt: soon.data.expiresAt },
      },
    ]);
    const later = { ...third, now: '2026-05-01T00:10:00.000Z' };
    expect(given([...opened, soon]).when(later)).toThrow(/expired at 2026-05-01T00:10:00.000Z/);
    const revoked: AccountEvent = { type: 'ApiKeyRevoked', data: { keyId: 'key_1', accountId: 'acct_1' } };
    expect(given([...opened, revoked]).when(rotation)).toThrow(/key_1 not found/);
  });

  it('revokes a key once; revoking it again changes nothing', () => {
    const revoked: AccountEvent = { type: 'ApiKeyRevoked', data: { keyId: 'key_1', accountId: 'acct_1' } };
    expect(given(opened).when({ type: 'RevokeKey', keyId: 'key_1' })()).toEqual([revoked]);
    expect(given([...opened, revoked]).when({ type: 'RevokeKey', keyId: 'key_1' })()).toEqual([]);
    expect(given(opened).when({ type: 'RevokeKey', keyId: 'key_9' })).toThrow(/key_9 not found/);
  });

  it('records a top-up once per payment reference', () => {
    const topUp: AccountCommand = { type: 'TopUp', reference: 'ch_1', amountNanos: 2_500_000_000n };
    const recorded: AccountEvent = {
      type: 'AccountToppedUp',
      data: { accountId: 'acct_1', reference: 'ch_1', amountNanos: '2500000000' },
    };
    expect(given(opened).when(topUp)()).toEqual([recorded]);
    expect(given([...opened, recorded]).when(topUp)()).toEqual([]);
    const otherAmount = given([...opened, recorded]).when({ ...topUp, amountNanos: 1n });
    expect(otherAmount).toThrow(/different amount/);
  });

  it('refuses a top-up that is not positive, or has no reference', () => {
    expect(given(opened).when({ type: 'TopUp', reference: 'r', amountNanos: 0n })).toThrow(/positive/);
    expect(given(opened).when({ type: 'TopUp', reference: '', amountNanos: 1n })).toThrow(/reference/);
  });

  it('folds top-ups into the balance', () => {
    const state = [
      ...opened,
      { type: 'AccountToppedUp', data: { accountId: 'acct_1', reference: 'a', amountNanos: '10' } },
      { type: 'AccountToppedUp', data: { accountId: 'acct_1', reference: 'b', amountNanos: '5' } },
    ].reduce((s, e) => evolve(s, e as AccountEvent), initialState());
    expect(state.toppedUpNanos).toBe(15n);
  });

  it('reverses only the part of a refund not yet reversed, never more than the top-up', () => {
    const toppedUp: AccountEvent = {
      type: 'AccountToppedUp',
      data: { accountId: 'acct_1', reference: 'cs_1', amountNanos: '1000' },
    };
    const refund = (refundedNanos: bigint) =>
      ({ type: 'ReverseTopUp', reference: 'cs_1', refundedNanos, refundReference: 'ch_1' }) as const;
    const first = given([...opened, toppedUp]).when(refund(400n))();
    expect(first).toEqual([
      {
        type: 'AccountTopUpReversed',
        data: {
          accountId: 'acct_1',
          reference: 'cs_1',
          amountNanos: '400',
          refundedNanos: '400',
          refundReference: 'ch_1',
        },
      },
    ]);
    const after = [...opened, toppedUp, ...first];
    expect(given(after).when(refund(400n))()).toEqual([]);
    expect(given(after).when(refund(5000n))()).toMatchObject([
      { data: { amountNanos: '600', refundedNanos: '1000' } },
    ]);
    expect(after.reduce(evolve, initialState()).toppedUpNanos).toBe(600n);
    expect(given(opened).when(refund(1n))).toThrow(/no top-up/);
  });

  it('changes settings that are given, and refuses bad ones by field', () => {
    expect(given(opened).when({ type: 'ChangeSettings', rateLimitRpm: 1200 })()).toEqual([
      { type: 'AccountSettingsChanged', data: { accountId: 'acct_1', rateLimitRpm: 1200 } },
    ]);
    expect(given(opened).when({ type: 'ChangeSettings', cacheDefault: 'force' })()).toEqual([
      { type: 'AccountSettingsChanged', data: { accountId: 'acct_1', cacheDefault: 'force' } },
    ]);
    expect(given(opened).when({ type: 'ChangeSettings' })()).toEqual([]);
    expect(given(opened).when({ type: 'ChangeSettings', rateLimitRpm: 0 })).toThrow(/rate_limit_rpm/);
    expect(given(opened).when({ type: 'ChangeSettings', balanceLowThresholdNanos: -1n })).toThrow(
      /balance_low_cents/,
    );
  });

  it('sets the account tokens per minute, lifts it with null, and refuses one that is not a positive integer', () => {
    expect(given(opened).when({ type: 'ChangeSettings', rateLimitTpm: 50_000 })()).toEqual([
      { type: 'AccountSettingsChanged', data: { accountId: 'acct_1', rateLimitTpm: 50_000 } },
    ]);
    expect(given(opened).when({ type: 'ChangeSettings', rateLimitTpm: null })()).toEqual([
      { type: 'AccountSettingsChanged', data: { accountId: 'acct_1', rateLimitTpm: null } },
    ]);
    for (const bad of [0, -1, 1.5]) {
      expect(given(opened).when({ type: 'ChangeSettings', rateLimitTpm: bad })).toThrow(/rate_limit_tpm/);
    }
  });

  it('sets a tag budget, ignoring the same cap set again', () => {
    const set: AccountEvent = {
      type: 'TagBudgetSet',
      data: { accountId: 'acct_1', tag: 'ads', capNanos: '100' },
    };
    expect(given(opened).when({ type: 'SetTagBudget', tag: 'ads', capNanos: 100n })()).toEqual([set]);
    expect(given([...opened, set]).when({ type: 'SetTagBudget', tag: 'ads', capNanos: 100n })()).toEqual([]);
    expect(given(opened).when({ type: 'SetTagBudget', tag: ' ', capNanos: 1n })).toThrow(/tag/);
  });

  it('summarizes a day once', () => {
    const command: AccountCommand = {
      type: 'SummarizeDay',
      day: '2026-05-11',
      requests: 3,
      costNanos: 42n,
      units: 9,
    };
    const summary: AccountEvent = {
      type: 'DailyUsageSummarized',
      data: { accountId: 'acct_1', day: '2026-05-11', requests: 3, costNanos: '42', units: 9 },
    };
    expect(given(opened).when(command)()).toEqual([summary]);
    expect(given([...opened, summary]).when(command)()).toEqual([]);
  });
});
