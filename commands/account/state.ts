import { type AccountEvent, DEFAULT_KEY_NAME } from '../../events/account.ts';
import type { KeyState } from '../keys.ts';

export interface AccountState {
  exists: boolean;
  accountId: string;
  name: string;
  rateLimitRpm: number;
  keys: ReadonlyMap<string, KeyState & { keyHash: string }>;
  /** Top-up amounts by payment reference. */
  topUps: ReadonlyMap<string, bigint>;
  /** Refunded totals by top-up reference. */
  reversed: ReadonlyMap<string, bigint>;
  /** All top-ups ever, less reversals; spending is tracked in the budget streams. */
  toppedUpNanos: bigint;
  balanceLowThresholdNanos: bigint;
  tagBudgets: ReadonlyMap<string, bigint>;
  summarizedDays: ReadonlySet<string>;
  /** Where the account's lifecycle webhooks go; null when none is set. */
  webhookUrl: string | null;
  /** Provider keys the account and its sub-accounts brought, not removed, by id (the secrets live outside the log). */
  providerKeys: ReadonlyMap<string, { subAccountId: string | null; provider: string; name: string }>;
}

/** `balance.low` fires below $1.00 unless the operator sets another threshold. */
export const DEFAULT_BALANCE_LOW_NANOS = 1_000_000_000n;

export function initialState(): AccountState {
  return {
    exists: false,
    accountId: '',
    name: '',
    rateLimitRpm: 0,
    keys: new Map(),
    topUps: new Map(),
    reversed: new Map(),
    toppedUpNanos: 0n,
    balanceLowThresholdNanos: DEFAULT_BALANCE_LOW_NANOS,
    tagBudgets: new Map(),
    summarizedDays: new Set(),
    webhookUrl: null,
    providerKeys: new Map(),
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
        keys: new Map(state.keys).set(event.data.keyId, {
          keyHash: event.data.keyHash,
          revoked: false,
          name: event.data.name ?? DEFAULT_KEY_NAME,
          expiresAt: event.data.expiresAt ?? null,
        }),
      };
    case 'ApiKeyRevoked': {
      const key = state.keys.get(event.data.keyId);
      if (!key) return state;
      return { ...state, keys: new Map(state.keys).set(event.data.keyId, { ...key, revoked: true }) };
    }
    case 'ApiKeyRotated': {
      const key = state.keys.get(event.data.keyId);
      if (!key) return state;
      const expiresAt = event.data.expiresAt;
      return { ...state, keys: new Map(state.keys).set(event.data.keyId, { ...key, expiresAt }) };
    }
    case 'AccountToppedUp': {
      const amount = BigInt(event.data.amountNanos);
      return {
        ...state,
        topUps: new Map(state.topUps).set(event.data.reference, amount),
        toppedUpNanos: state.toppedUpNanos + amount,
      };
    }
    case 'AccountTopUpReversed':
      return {
        ...state,
        reversed: new Map(state.reversed).set(event.data.reference, BigInt(event.data.refundedNanos)),
        toppedUpNanos: state.toppedUpNanos - BigInt(event.data.amountNanos),
      };
    case 'AccountSettingsChanged':
      return {
        ...state,
        rateLimitRpm: event.data.rateLimitRpm ?? state.rateLimitRpm,
        balanceLowThresholdNanos:
          event.data.balanceLowThresholdNanos === undefined
            ? state.balanceLowThresholdNanos
            : BigInt(event.data.balanceLowThresholdNanos),
      };
    case 'TagBudgetSet':
      return {
        ...state,
        tagBudgets: new Map(state.tagBudgets).set(event.data.tag, BigInt(event.data.capNanos)),
      };
    case 'TagBudgetRemoved': {
      const tagBudgets = new Map(state.tagBudgets);
      tagBudgets.delete(event.data.tag);
      return { ...state, tagBudgets };
    }
    case 'DailyUsageSummarized':
      return { ...state, summarizedDays: new Set(state.summarizedDays).add(event.data.day) };
    case 'WebhookEndpointSet':
      return { ...state, webhookUrl: event.data.url };
    case 'ProviderKeyRegistered': {
      const { providerKeyId, subAccountId, provider, name } = event.data;
      const providerKeys = new Map(state.providerKeys).set(providerKeyId, { subAccountId, provider, name });
      return { ...state, providerKeys };
    }
    case 'ProviderKeyRemoved': {
      const providerKeys = new Map(state.providerKeys);
      providerKeys.delete(event.data.providerKeyId);
      return { ...state, providerKeys };
    }
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}
