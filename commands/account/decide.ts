import type { AccountEvent } from '../../events/account.ts';
import { NANOS_PER_CENT } from '../../events/money.ts';
import { DomainError } from '../errors.ts';
import { type KeyTerms, keyName, type Rotation, rotate } from '../keys.ts';
import { registerProviderKey, removeProviderKey } from './provider-keys.ts';
import type { AccountState } from './state.ts';

/**
 * Balances are answered in whole cents as JSON numbers: past 2^53 - 1 cents they could not be told apart (and the
 * answer's schema refused them), so the sum of an account's top-ups stays within it.
 */
export const MAX_TOPPED_UP_NANOS = BigInt(Number.MAX_SAFE_INTEGER) * NANOS_PER_CENT;

export type AccountCommand =
  | {
      type: 'OpenAccount';
      accountId: string;
      name: string;
      rateLimitRpm: number;
      key: NewKey;
      /** A credit recorded with the opening itself (the demo account), so that neither exists without the other. */
      initialTopUp?: { reference: string; amountNanos: bigint };
    }
  | ({ type: 'IssueKey'; key: NewKey } & KeyTerms)
  | { type: 'RevokeKey'; keyId: string }
  /** A new key in place of `keyId`, which keeps working until the grace period ends. */
  | ({ type: 'RotateKey'; key: NewKey } & Rotation)
  | { type: 'TopUp'; reference: string; amountNanos: bigint }
  /** The processor reports a top-up's refunded total; only what is new is reversed. */
  | { type: 'ReverseTopUp'; reference: string; refundedNanos: bigint; refundReference: string }
  | {
      type: 'ChangeSettings';
      rateLimitRpm?: number;
      /** null lifts the limit. */
      rateLimitTpm?: number | null;
      balanceLowThresholdNanos?: bigint;
      requestBodies?: 'keep' | 'drop' | null;
      requestRetentionDays?: number | null;
      routing?: { allowed: string[] | null; excluded: string[] } | null;
      mcpWriteTools?: boolean;
      cacheDefault?: 'auto' | 'force' | 'semantic' | 'skip';
      byokSubAccounts?: boolean;
      byokFallback?: boolean;
    }
  | { type: 'SetTagBudget'; tag: string; capNanos: bigint }
  | { type: 'RemoveTagBudget'; tag: string }
  | { type: 'SummarizeDay'; day: string; requests: number; costNanos: bigint; units: number }
  /** The URL's form and address are checked before the command is built (that check is I/O). */
  | { type: 'SetWebhookEndpoint'; url: string | null }
  /** The secret is stored (encrypted) before the command is built; only its last four characters travel here. */
  | {
      type: 'RegisterProviderKey';
      subAccountId: string | null;
      providerKeyId: string;
      provider: string;
      name: string;
      last4: string;
    }
  | { type: 'RemoveProviderKey'; subAccountId: string | null; providerKeyId: string };

/** A key generated outside the decider (randomness is I/O); only its hash reaches the log. */
export interface NewKey {
  keyId: string;
  keyHash: string;
  keyPrefix: string;
}

export function decide(command: AccountCommand, state: AccountState): AccountEvent[] {
  switch (command.type) {
    case 'OpenAccount':
      if (state.exists) throw new DomainError('conflict', `account ${command.accountId} already exists`);
      if (command.name.trim() === '') throw new DomainError('invalid', 'name must not be empty', 'name');
      return [
        {
          type: 'AccountOpened',
          data: { accountId: command.accountId, name: command.name, rateLimitRpm: command.rateLimitRpm },
        },
        { type: 'ApiKeyIssued', data: { ...command.key, accountId: command.accountId } },
        ...(command.initialTopUp
          ? [
              {
                type: 'AccountToppedUp' as const,
                data: {
                  accountId: command.accountId,
                  reference: command.initialTopUp.reference,
                  amountNanos: command.initialTopUp.amountNanos.toString(),
                },
              },
            ]
          : []),
      ];
    case 'IssueKey':
      requireAccount(state);
      return [
        {
          type: 'ApiKeyIssued',
          data: {
            ...command.key,
            accountId: state.accountId,
            name: keyName(command.name),
            expiresAt: command.expiresAt ?? null,
          },
        },
      ];
    case 'RotateKey': {
      requireAccount(state);
      const { name, expiresAt, oldEndsAt } = rotate(state.keys.get(command.keyId), command);
      const accountId = state.accountId;
      return [
        { type: 'ApiKeyIssued', data: { ...command.key, accountId, name, expiresAt } },
        {
          type: 'ApiKeyRotated',
          data: { keyId: command.keyId, accountId, replacedBy: command.key.keyId, expiresAt: oldEndsAt },
        },
      ];
    }
    case 'RevokeKey': {
      requireAccount(state);
      const key = state.keys.get(command.keyId);
      if (!key) throw new DomainError('not_found', `key ${command.keyId} not found`, 'key_id');
      if (key.revoked) return [];
      return [{ type: 'ApiKeyRevoked', data: { keyId: command.keyId, accountId: state.accountId } }];
    }
    case 'TopUp': {
      requireAccount(state);
      if (command.amountNanos <= 0n) throw new DomainError('invalid', 'a top-up must be positive', 'cents');
      if (command.reference.trim() === '')
        throw new DomainError('invalid', 'reference must not be empty', 'reference');
      const recorded = state.topUps.get(command.reference);
      if (recorded === command.amountNanos) return [];
      if (recorded !== undefined) {
        throw new DomainError(
          'conflict',
          `reference ${command.reference} was already recorded with a different amount`,
          'reference',
        );
      }
      if (state.toppedUpNanos + command.amountNanos > MAX_TOPPED_UP_NANOS) {
        throw new DomainError(
          'invalid',
          `'cents': the account's top-ups would total more than ${MAX_TOPPED_UP_NANOS / NANOS_PER_CENT} cents, the most a balance can show`,
          'cents',
        );
      }
      return [
        {
          type: 'AccountToppedUp',
          data: {
            accountId: state.accountId,
            reference: command.reference,
            amountNanos: command.amountNanos.toString(),
          },
        },
      ];
    }
    case 'ReverseTopUp': {
      requireAccount(state);
      const toppedUp = state.topUps.get(command.reference);
      if (toppedUp === undefined)
        throw new DomainError('not_found', `no top-up with reference ${command.reference}`, 'reference');
      // Never more than the top-up itself, whatever the processor says; a refund reported again is a no-op.
      const refunded = command.refundedNanos < toppedUp ? command.refundedNanos : toppedUp;
      const already = state.reversed.get(command.reference) ?? 0n;
      if (refunded <= already) return [];
      return [
        {
          type: 'AccountTopUpReversed',
          data: {
            accountId: state.accountId,
            reference: command.reference,
            amountNanos: (refunded - already).toString(),
            refundedNanos: refunded.toString(),
            refundReference: command.refundReference,
          },
        },
      ];
    }
    case 'ChangeSettings': {
      requireAccount(state);
      if (
        command.rateLimitRpm !== undefined &&
        !(Number.isSafeInteger(command.rateLimitRpm) && command.rateLimitRpm > 0)
      ) {
        throw new DomainError('invalid', 'rate_limit_rpm must be a positive integer', 'rate_limit_rpm');
      }
      const tpm = command.rateLimitTpm;
      if (tpm !== undefined && tpm !== null && !(Number.isSafeInteger(tpm) && tpm > 0)) {
        throw new DomainError(
          'invalid',
          'rate_limit_tpm must be a positive integer or null',
          'rate_limit_tpm',
        );
      }
      if (command.balanceLowThresholdNanos !== undefined && command.balanceLowThresholdNanos < 0n) {
        throw new DomainError('invalid', 'balance_low_cents must not be negative', 'balance_low_cents');
      }
      const data = {
        accountId: state.accountId,
        ...(command.rateLimitRpm === undefined ? {} : { rateLimitRpm: command.rateLimitRpm }),
        ...(tpm === undefined ? {} : { rateLimitTpm: tpm }),
        ...(command.balanceLowThresholdNanos === undefined
          ? {}
          : { balanceLowThresholdNanos: command.balanceLowThresholdNanos.toString() }),
        ...(command.requestBodies === undefined ? {} : { requestBodies: command.requestBodies }),
        ...(command.requestRetentionDays === undefined
          ? {}
          : { requestRetentionDays: command.requestRetentionDays }),
        ...(command.routing === undefined ? {} : { routing: command.routing }),
        ...(command.mcpWriteTools === undefined ? {} : { mcpWriteTools: command.mcpWriteTools }),
        ...(command.cacheDefault === undefined ? {} : { cacheDefault: command.cacheDefault }),
        ...(command.byokSubAccounts === undefined ? {} : { byokSubAccounts: command.byokSubAccounts }),
        ...(command.byokFallback === undefined ? {} : { byokFallback: command.byokFallback }),
      };
      return Object.keys(data).length > 1 ? [{ type: 'AccountSettingsChanged', data }] : [];
    }
    case 'SetTagBudget':
      requireAccount(state);
      if (command.tag.trim() === '') throw new DomainError('invalid', 'tag must not be empty', 'tag');
      if (command.capNanos < 0n)
        throw new DomainError('invalid', 'cap_cents must not be negative', 'cap_cents');
      if (state.tagBudgets.get(command.tag) === command.capNanos) return [];
      return [
        {
          type: 'TagBudgetSet',
          data: { accountId: state.accountId, tag: command.tag, capNanos: command.capNanos.toString() },
        },
      ];
    case 'RemoveTagBudget':
      requireAccount(state);
      if (!state.tagBudgets.has(command.tag))
        throw new DomainError('not_found', `'tag': no budget for tag ${command.tag}`, 'tag');
      return [{ type: 'TagBudgetRemoved', data: { accountId: state.accountId, tag: command.tag } }];
    case 'SummarizeDay':
      requireAccount(state);
      if (state.summarizedDays.has(command.day)) return [];
      return [
        {
          type: 'DailyUsageSummarized',
          data: {
            accountId: state.accountId,
            day: command.day,
            requests: command.requests,
            costNanos: command.costNanos.toString(),
            units: command.units,
          },
        },
      ];
    case 'SetWebhookEndpoint':
      requireAccount(state);
      if (state.webhookUrl === command.url) return [];
      return [{ type: 'WebhookEndpointSet', data: { accountId: state.accountId, url: command.url } }];
    case 'RegisterProviderKey':
      requireAccount(state);
      return registerProviderKey(command, state);
    case 'RemoveProviderKey':
      requireAccount(state);
      return removeProviderKey(command, state);
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
}

function requireAccount(state: AccountState): void {
  if (!state.exists) throw new DomainError('not_found', 'account not found', 'account');
}
