import type { z } from 'zod';
import { DEFAULT_KEY_NAME } from '../../events/account.ts';
import type { PriceOverride, SubAccountEvent } from '../../events/subaccount.ts';
import { DomainError } from '../errors.ts';
import type { KeyState } from '../keys.ts';
import { decideKey, type SubAccountKeyCommand } from './keys.ts';

export interface SubAccountState {
  exists: boolean;
  deleted: boolean;
  subAccountId: string;
  accountId: string;
  /** Its first key, issued with it. */
  keyId: string;
  keys: ReadonlyMap<string, KeyState>;
}

export function initialState(): SubAccountState {
  return { exists: false, deleted: false, subAccountId: '', accountId: '', keyId: '', keys: new Map() };
}

const withKey = (state: SubAccountState, keyId: string, key: KeyState): SubAccountState => ({
  ...state,
  keys: new Map(state.keys).set(keyId, key),
});

export function evolve(state: SubAccountState, event: SubAccountEvent): SubAccountState {
  switch (event.type) {
    case 'SubAccountCreated':
      return {
        ...state,
        exists: true,
        subAccountId: event.data.subAccountId,
        accountId: event.data.accountId,
        keyId: event.data.keyId,
        keys: new Map([[event.data.keyId, { revoked: false, name: DEFAULT_KEY_NAME, expiresAt: null }]]),
      };
    case 'SubAccountUpdated':
      return state;
    case 'SubAccountDeleted':
      return { ...state, deleted: true };
    case 'SubAccountKeyIssued':
      return withKey(state, event.data.keyId, {
        revoked: false,
        name: event.data.name,
        expiresAt: event.data.expiresAt,
      });
    case 'SubAccountKeyRevoked': {
      const key = state.keys.get(event.data.keyId);
      return key ? withKey(state, event.data.keyId, { ...key, revoked: true }) : state;
    }
    case 'SubAccountKeyRotated': {
      const key = state.keys.get(event.data.keyId);
      return key ? withKey(state, event.data.keyId, { ...key, expiresAt: event.data.expiresAt }) : state;
    }
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}

/** The reseller's settings (events/subaccount.ts): validated by the caller, recorded as given. */
export interface ResellerSettings {
  markupBasisPoints?: number;
  priceOverrides?: z.infer<typeof PriceOverride>[];
  spendCapReset?: 'daily' | 'weekly' | 'monthly' | null;
  /** Already capped at the account's own limit by the caller. */
  rateLimitTpm?: number | null;
  allowedModels?: string[] | null;
}

export interface SubAccountSettings extends ResellerSettings {
  name?: string;
  externalRef?: string | null;
  spendCapNanos?: bigint;
  /** Already capped at the account's own limit by the caller, which knows that limit. */
  rateLimitRpm?: number;
  defaultTag?: string | null;
}

export type SubAccountCommand =
  | {
      type: 'CreateSubAccount';
      subAccountId: string;
      accountId: string;
      /** Whether the account was ever topped up: sub-accounts resell prepaid credit. */
      accountToppedUp: boolean;
      name: string;
      externalRef: string | null;
      spendCapNanos: bigint;
      rateLimitRpm: number;
      defaultTag: string | null;
      key: { keyId: string; keyHash: string; keyPrefix: string };
      reseller: ResellerSettings;
    }
  | { type: 'UpdateSubAccount'; accountId: string; changes: SubAccountSettings }
  | { type: 'DeleteSubAccount'; accountId: string }
  | SubAccountKeyCommand;

export class TopUpRequired extends Error {
  override readonly name = 'TopUpRequired';
}

export function decide(command: SubAccountCommand, state: SubAccountState): SubAccountEvent[] {
  switch (command.type) {
    case 'CreateSubAccount':
      if (state.exists)
        throw new DomainError('conflict', `sub-account ${command.subAccountId} already exists`);
      if (!command.accountToppedUp) {
        throw new TopUpRequired(
          'Sub-accounts can be created once the account has been topped up at least once',
        );
      }
      if (command.spendCapNanos < 0n) {
        throw new DomainError('invalid', 'spend_cap_cents must not be negative', 'spend_cap_cents');
      }
      return [
        {
          type: 'SubAccountCreated',
          data: {
            subAccountId: command.subAccountId,
            accountId: command.accountId,
            name: command.name,
            externalRef: command.externalRef,
            spendCapNanos: command.spendCapNanos.toString(),
            rateLimitRpm: command.rateLimitRpm,
            defaultTag: command.defaultTag,
            ...command.key,
            ...given(command.reseller),
          },
        },
      ];
    case 'UpdateSubAccount': {
      requireOwned(state, command.accountId);
      const { changes } = command;
      if (changes.spendCapNanos !== undefined && changes.spendCapNanos < 0n) {
        throw new DomainError('invalid', 'spend_cap_cents must not be negative', 'spend_cap_cents');
      }
      const data = {
        subAccountId: state.subAccountId,
        accountId: state.accountId,
        ...(changes.name === undefined ? {} : { name: changes.name }),
        ...(changes.externalRef === undefined ? {} : { externalRef: changes.externalRef }),
        ...(changes.spendCapNanos === undefined ? {} : { spendCapNanos: changes.spendCapNanos.toString() }),
        ...(changes.rateLimitRpm === undefined ? {} : { rateLimitRpm: changes.rateLimitRpm }),
        ...(changes.defaultTag === undefined ? {} : { defaultTag: changes.defaultTag }),
        ...given(changes),
      };
      return Object.keys(data).length > 2 ? [{ type: 'SubAccountUpdated', data }] : [];
    }
    case 'DeleteSubAccount':
      requireOwned(state, command.accountId);
      return [
        {
          type: 'SubAccountDeleted',
          data: { subAccountId: state.subAccountId, accountId: state.accountId, keyId: state.keyId },
        },
      ];
    case 'IssueSubAccountKey':
    case 'RevokeSubAccountKey':
    case 'RotateSubAccountKey':
      requireOwned(state, command.accountId);
      return decideKey(command, state);
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
}

/** The reseller settings that were given (undefined ones are left as they are). */
function given(settings: ResellerSettings): ResellerSettings {
  const { markupBasisPoints, priceOverrides, spendCapReset, rateLimitTpm, allowedModels } = settings;
  return {
    ...(markupBasisPoints === undefined ? {} : { markupBasisPoints }),
    ...(priceOverrides === undefined ? {} : { priceOverrides }),
    ...(spendCapReset === undefined ? {} : { spendCapReset }),
    ...(rateLimitTpm === undefined ? {} : { rateLimitTpm }),
    ...(allowedModels === undefined ? {} : { allowedModels }),
  };
}

/** Another account's sub-account, or a deleted one, is simply not found. */
function requireOwned(state: SubAccountState, accountId: string): void {
  if (!state.exists || state.deleted || state.accountId !== accountId) {
    throw new DomainError('not_found', 'sub-account not found', 'id');
  }
}
