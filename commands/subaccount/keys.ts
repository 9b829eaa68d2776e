import type { SubAccountEvent } from '../../events/subaccount.ts';
import { DomainError } from '../errors.ts';
import { type KeyTerms, keyName, type Rotation, rotate } from '../keys.ts';
import type { SubAccountState } from './decide.ts';

/** A key generated outside the decider (randomness is I/O); only its hash reaches the log. */
interface NewKey {
  keyId: string;
  keyHash: string;
  keyPrefix: string;
}

/** The named keys of a sub-account, beyond the first one it is created with. */
export type SubAccountKeyCommand =
  | ({ type: 'IssueSubAccountKey'; accountId: string; key: NewKey } & KeyTerms)
  | { type: 'RevokeSubAccountKey'; accountId: string; keyId: string }
  | ({ type: 'RotateSubAccountKey'; accountId: string; key: NewKey } & Rotation);

/** Decided once the sub-account is known to be the account's and not deleted. */
export function decideKey(command: SubAccountKeyCommand, state: SubAccountState): SubAccountEvent[] {
  const { subAccountId, accountId } = state;
  switch (command.type) {
    case 'IssueSubAccountKey':
      return [
        {
          type: 'SubAccountKeyIssued',
          data: {
            subAccountId,
            accountId,
            ...command.key,
            name: keyName(command.name),
            expiresAt: command.expiresAt ?? null,
          },
        },
      ];
    case 'RevokeSubAccountKey': {
      const key = state.keys.get(command.keyId);
      if (!key) throw new DomainError('not_found', `key ${command.keyId} not found`, 'key_id');
      if (key.revoked) return [];
      return [{ type: 'SubAccountKeyRevoked', data: { subAccountId, accountId, keyId: command.keyId } }];
    }
    case 'RotateSubAccountKey': {
      const { name, expiresAt, oldEndsAt } = rotate(state.keys.get(command.keyId), command);
      return [
        { type: 'SubAccountKeyIssued', data: { subAccountId, accountId, ...command.key, name, expiresAt } },
        {
          type: 'SubAccountKeyRotated',
          data: {
            subAccountId,
            accountId,
            keyId: command.keyId,
            replacedBy: command.key.keyId,
            expiresAt: oldEndsAt,
          },
        },
      ];
    }
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
}
