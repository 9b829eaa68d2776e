import { describe, expect, it } from 'vitest';
import type { SubAccountEvent } from '../../events/subaccount.ts';
import { decide, evolve, initialState, type SubAccountCommand, TopUpRequired } from './decide.ts';

const key = { keyId: 'key_s', keyHash: 'b'.repeat(64), keyPrefix: 'sk-gw-xyz' };
const create: SubAccountCommand = {
  type: 'CreateSubAccount',
  subAccountId: 'sa_1',
  accountId: 'acct_1',
  accountToppedUp: true,
  name: 'Customer',
  externalRef: 'crm-9',
  spendCapNanos: 1_000_000_000n,
  rateLimitRpm: 60,
  defaultTag: 'cust',
  key,
  reseller: {},
};
const created: SubAccountEvent = {
  type: 'SubAccountCreated',
  data: {
    subAccountId: 'sa_1',
    accountId: 'acct_1',
    name: 'Customer',
    externalRef: 'crm-9',
    spendCapNanos: '1000000000',
    rateLimitRpm: 60,
    defaultTag: 'cust',
    ...key,
  },
};
const given = (events: SubAccountEvent[]) => {
  const state = events.reduce(evolve, initialState());
  return (command: SubAccountCommand) => () => decide(command, state);
};

describe('sub-account decider', () => {
  it('creates a sub-account with its scoped key', () => {
    expect(given([])(create)()).toEqual([created]);
  });

  it('refuses creation before the account was ever topped up', () => {
    expect(given([])({ ...create, accountToppedUp: false })).toThrow(TopUpRequired);
  });

  it('records the reseller settings given, and only those', () => {
    const reseller = {
      markupBasisPoints: 3000,
      priceOverrides: [{ model: 'openai/*', markupBasisPoints: 1250 }],
      spendCapReset: 'monthly' as const,
      rateLimitTpm: 10_000,
      allowedModels: ['openai/gpt-4o-mini', 'local/*'],
    };
    expect(given([])({ ...create, reseller } as SubAccountCommand)()).toEqual([
      { ...created, data: { ...created.data, ...reseller } },
    ]);
    expect(
      given([created])({ type: 'UpdateSubAccount', accountId: 'acct_1', changes: { allowedModels: null } })(),
    ).toEqual([
      { type: 'SubAccountUpdated', data: { subAccountId: 'sa_1', accountId: 'acct_1', allowedModels: null } },
    ]);
  });

  it('updates only the fields given; an empty update changes nothing', () => {
    const update = given([created]);
    expect(
      update({ type: 'UpdateSubAccount', accountId: 'acct_1', changes: { defaultTag: null } })(),
    ).toEqual([
      { type: 'SubAccountUpdated', data: { subAccountId: 'sa_1', accountId: 'acct_1', defaultTag: null } },
    ]);
    expect(update({ type: 'UpdateSubAccount', accountId: 'acct_1', changes: {} })()).toEqual([]);
  });

  it('treats another account’s or a deleted sub-account as not found', () => {
    expect(given([created])({ type: 'DeleteSubAccount', accountId: 'acct_2' })).toThrow(/not found/);
    const deleted: SubAccountEvent = {
      type: 'SubAccountDeleted',
      data: { subAccountId: 'sa_1', accountId: 'acct_1', keyId: 'key_s' },
    };
    expect(given([created])({ type: 'DeleteSubAccount', accountId: 'acct_1' })()).toEqual([deleted]);
    expect(given([created, deleted])({ type: 'DeleteSubAccount', accountId: 'acct_1' })).toThrow(/not found/);
  });

  it('issues, rotates and revokes named keys of its own, never of another account or once deleted', () => {
    const second = { keyId: 'key_t', keyHash: 'c'.repeat(64), keyPrefix: 'sk-gw-tuv' };
    const issued: SubAccountEvent = {
      type: 'SubAccountKeyIssued',
      data: { subAccountId: 'sa_1', accountId: 'acct_1', ...second, name: 'ci', expiresAt: null },
    };
    const issue: SubAccountCommand = {
      type: 'IssueSubAccountKey',
      accountId: 'acct_1',
      key: second,
      name: 'ci',
    };
    expect(given([created])(issue)()).toEqual([issued]);
    expect(given([created])({ ...issue, accountId: 'acct_2' })).toThrow(/not found/);
    // The first key, issued with the sub-account, is rotated like any other: its name is `default`.
    const third = { keyId: 'key_u', keyHash: 'd'.repeat(64), keyPrefix: 'sk-gw-uvw' };
    const rotate: SubAccountCommand = {
      type: 'RotateSubAccountKey',
      accountId: 'acct_1',
      key: third,
      keyId: 'key_s',
      now: '2026-05-01T00:00:00.000Z',
      graceEndsAt: '2026-05-01T00:05:00.000Z',
    };
    expect(given([created, issued])(rotate)()).toEqual([
      {
        type: 'SubAccountKeyIssued',
        data: { subAccountId: 'sa_1', accountId: 'acct_1', ...third, name: 'default', expiresAt: null },
      },
      {
        type: 'SubAccountKeyRotated',
        data: {
          subAccountId: 'sa_1',
          accountId: 'acct_1',
          keyId: 'key_s',
          replacedBy: 'key_u',
          expiresAt: '2026-05-01T00:05:00.000Z',
        },
      },
    ]);
    const revoke: SubAccountCommand = { type: 'RevokeSubAccountKey', accountId: 'acct_1', keyId: 'key_t' };
    const revoked: SubAccountEvent = {
      type: 'SubAccountKeyRevoked',
      data: { subAccountId: 'sa_1', accountId: 'acct_1', keyId: 'key_t' },
    };
    expect(given([created, issued])(revoke)()).toEqual([revoked]);
    expect(given([created, issued, revoked])(revoke)()).toEqual([]);
    expect(given([created])({ ...revoke, keyId: 'key_zz' })).toThrow(/key_zz not found/);
    expect(given([created, issued, revoked])({ ...rotate, keyId: 'key_t' })).toThrow(/key_t not found/);
    const deleted: SubAccountEvent = {
      type: 'SubAccountDeleted',
      data: { subAccountId: 'sa_1', accountId: 'acct_1', keyId: 'key_s' },
    };
    expect(given([created, deleted])(issue)).toThrow(/not found/);
  });
});
