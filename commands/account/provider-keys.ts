import type { AccountEvent } from '../../events/account.ts';
import { DomainError } from '../errors.ts';
import type { AccountCommand } from './decide.ts';
import type { AccountState } from './state.ts';

type Register = Extract<AccountCommand, { type: 'RegisterProviderKey' }>;
type Remove = Extract<AccountCommand, { type: 'RemoveProviderKey' }>;

/** A name tells an owner's keys of one provider apart: two of one owner and provider may not share it. */
export function registerProviderKey(command: Register, state: AccountState): AccountEvent[] {
  if (command.name.trim() === '') throw new DomainError('invalid', "'name': must not be empty", 'name');
  for (const key of state.providerKeys.values()) {
    if (
      key.subAccountId === command.subAccountId &&
      key.provider === command.provider &&
      key.name === command.name
    )
      throw new DomainError(
        'conflict',
        `'name': a ${command.provider} key named '${command.name}' is already registered`,
        'name',
      );
  }
  const { subAccountId, providerKeyId, provider, name, last4 } = command;
  return [
    {
      type: 'ProviderKeyRegistered',
      data: { accountId: state.accountId, subAccountId, providerKeyId, provider, name, last4 },
    },
  ];
}

/** Only its owner removes a key: another owner's id reads as unknown, as it does when listing. */
export function removeProviderKey(command: Remove, state: AccountState): AccountEvent[] {
  const key = state.providerKeys.get(command.providerKeyId);
  if (!key || key.subAccountId !== command.subAccountId)
    throw new DomainError('not_found', `no provider key '${command.providerKeyId}'`, 'id');
  const { subAccountId, providerKeyId } = command;
  return [{ type: 'ProviderKeyRemoved', data: { accountId: state.accountId, subAccountId, providerKeyId } }];
}
