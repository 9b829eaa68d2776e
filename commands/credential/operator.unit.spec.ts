import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.ts';
import {
  type AddedCredentials,
  decideAdded,
  evolveAdded,
  type OperatorCredentialCommand,
} from './operator.ts';

const settings = { weight: 2, rpm: null, tpm: 100, monthlySpendNanos: null };
const add: OperatorCredentialCommand = {
  type: 'AddCredential',
  provider: 'openai',
  credential: 'team-a',
  last4: 'abcd',
  ...settings,
};
const stateAfter = (...commands: OperatorCredentialCommand[]): AddedCredentials =>
  commands.reduce<AddedCredentials>(
    (state, c) => decideAdded(c, state).reduce(evolveAdded, state),
    new Map(),
  );
const refusal = (command: OperatorCredentialCommand, state: AddedCredentials) => {
  try {
    decideAdded(command, state);
  } catch (error) {
    return error instanceof DomainError ? error.kind : 'other';
  }
  return undefined;
};

describe("the operator's added credentials", () => {
  it('adds a name once; a second add of it is a conflict', () => {
    const [event] = decideAdded(add, new Map());
    expect(event).toEqual({
      type: 'ProviderCredentialAdded',
      data: { provider: 'openai', credential: 'team-a', last4: 'abcd', ...settings },
    });
    expect(refusal(add, stateAfter(add))).toBe('conflict');
  });

  it('records a change of settings, nothing for the same settings, and refuses a name not added', () => {
    const change = { type: 'ChangeCredential', provider: 'openai', credential: 'team-a' } as const;
    expect(decideAdded({ ...change, ...settings }, stateAfter(add))).toEqual([]);
    const [event] = decideAdded({ ...change, ...settings, weight: 0, tpm: null }, stateAfter(add));
    expect(event?.data).toMatchObject({ weight: 0, tpm: null });
    expect(refusal({ ...change, ...settings }, new Map())).toBe('not_found');
  });

  it('removes an added name, after which it may be added again', () => {
    const remove = { type: 'RemoveCredential', provider: 'openai', credential: 'team-a' } as const;
    expect(decideAdded(remove, stateAfter(add))).toEqual([
      { type: 'ProviderCredentialRemoved', data: { provider: 'openai', credential: 'team-a' } },
    ]);
    expect(refusal(remove, stateAfter(add, remove))).toBe('not_found');
    expect(stateAfter(add, remove, add).get('team-a')).toEqual(settings);
  });
});
