import type { AccountEvent } from '../../events/account.ts';

export interface AccountState {
  exists: boolean;
  accountId: string;
  name: string;
  rateLimitRpm: number;
  keys: ReadonlyMap<string, { keyHash: string; revoked: boolean }>;
  /** Top-up amounts by payment reference. */
  topUps: ReadonlyMap<string, bigint>;
  balanceNanos: bigint;
}

export function initialState(): AccountState {
  return {
    exists: false,
    accountId: '',
    name: '',
    rateLimitRpm: 0,
    keys: new Map(),
    topUps: new Map(),
    balanceNanos: 0n,
  };
}

export function evolve(state: AccountState, event: AccountEvent): AccountState {
  switch (event.type) {
    case 'AccountOpened':
      return {
        ...state,
        exists: true,
        accountId: event.data.accountId,
        name: event.data.name,
        rateLimitRpm: event.data.rateLimitRpm,
      };
    case 'ApiKeyIssued':
      return {
        ...state,
        keys: new Map(state.keys).set(event.data.keyId, { keyHash: event.data.keyHash, revoked: false }),
      };
    case 'ApiKeyRevoked': {
      const key = state.keys.get(event.data.keyId);
      if (!key) return state;
      return { ...state, keys: new Map(state.keys).set(event.data.keyId, { ...key, revoked: true }) };
    }
    case 'AccountToppedUp': {
      const amount = BigInt(event.data.amountNanos);
      return {
        ...state,
        topUps: new Map(state.topUps).set(event.data.reference, amount),
        balanceNanos: state.balanceNanos + amount,
      };
    }
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}
