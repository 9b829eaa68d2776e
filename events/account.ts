import { z } from 'zod';
import { Nanos } from './money.ts';

/** Events of the `account-{accountId}` stream. */

export const AccountOpened = z.object({
  accountId: z.string(),
  name: z.string(),
  rateLimitRpm: z.number().int().positive(),
});

export const ApiKeyIssued = z.object({
  keyId: z.string(),
  accountId: z.string(),
  /** SHA-256 of the key, hex. The key itself is shown once and never stored. */
  keyHash: z.string().regex(/^[0-9a-f]{64}$/),
  /** The first characters of the key, for recognising it in listings. */
  keyPrefix: z.string(),
  /** Its owner's name for it; absent on keys issued before keys were named, which read as `default`. */
  name: z.string().optional(),
  /** When it stops authenticating (ISO time); null or absent: never. */
  expiresAt: z.string().nullable().optional(),
});

/** How a key without a name reads: one issued before keys were named (an account's first, a sub-account's first). */
export const DEFAULT_KEY_NAME = 'default';

export const ApiKeyRevoked = z.object({
  keyId: z.string(),
  accountId: z.string(),
});

/**
 * A key replaced by `replacedBy` (issued in the same append): it keeps working until `expiresAt`, the end of the
 * grace period (or its own earlier expiry), and then stops on every instance, by time alone.
 */
export const ApiKeyRotated = z.object({
  keyId: z.string(),
  accountId: z.string(),
  replacedBy: z.string(),
  expiresAt: z.string(),
});

export const AccountToppedUp = z.object({
  accountId: z.string(),
  /** The payment's reference at the card processor; a top-up is recorded once per reference. */
  reference: z.string(),
  amountNanos: Nanos,
});

/**
 * Money of a top-up given back by the card processor (a refund): the balance is reduced by `amountNanos`.
 * `refundedNanos` is the top-up's refunded total after this reversal, so a refund reported again changes nothing.
 */
export const AccountTopUpReversed = z.object({
  accountId: z.string(),
  /** The reversed top-up's reference. */
  reference: z.string(),
  amountNanos: Nanos,
  refundedNanos: Nanos,
  /** The processor's reference of the refund (a charge id). */
  refundReference: z.string(),
});

/** The operator's settings for an account; absent fields are unchanged. */
export const AccountSettingsChanged = z.object({
  accountId: z.string(),
  rateLimitRpm: z.number().int().positive().optional(),
  /**
   * Tokens per minute (input and output) of all the account's keys and sub-accounts together, which also caps each
   * sub-account's own; null lifts it (no limit until first set).
   */
  rateLimitTpm: z.number().int().positive().nullable().optional(),
  /** `balance.low` fires when the balance falls below this. */
  balanceLowThresholdNanos: Nanos.optional(),
  /** The request log's bodies for this account: `keep`, `drop`, or null for the gateway's setting. */
  requestBodies: z.enum(['keep', 'drop']).nullable().optional(),
  /** Days the request log keeps this account's bodies; null for the gateway's setting. */
  requestRetentionDays: z.number().int().positive().nullable().optional(),
  /** The models the automatic router may choose for this account (`*` wildcards); null lifts the restriction. */
  routing: z
    .object({ allowed: z.array(z.string()).nullable(), excluded: z.array(z.string()) })
    .nullable()
    .optional(),
  /** Whether the MCP server offers this account's keys its write tools (off until the operator turns them on). */
  mcpWriteTools: z.boolean().optional(),
  /** The response cache's mode for the account's requests that name none (`auto` until set; docs/cache.md). */
  cacheDefault: z.enum(['auto', 'force', 'semantic', 'skip']).optional(),
  /** Whether the account's sub-accounts may register provider keys of their own (docs/providers.md). */
  byokSubAccounts: z.boolean().optional(),
  /** Whether a request whose own provider key fails may fall back to the operator's pool (off until set). */
  byokFallback: z.boolean().optional(),
});

/** A monthly (UTC calendar month) spending cap for a cost tag. */
export const TagBudgetSet = z.object({ accountId: z.string(), tag: z.string(), capNanos: Nanos });

/** A tag's monthly cap removed: the tag is uncapped from then on (its spending stays in the usage reports). */
export const TagBudgetRemoved = z.object({ accountId: z.string(), tag: z.string() });

/** Yesterday's usage, recorded once per account and UTC day (becomes `usage.daily.summary`). */
export const DailyUsageSummarized = z.object({
  accountId: z.string(),
  day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  requests: z.number().int().nonnegative(),
  costNanos: Nanos,
  units: z.number().int().nonnegative(),
});

/** Where the account's lifecycle webhooks go (set by the operator); null stops them. */
export const WebhookEndpointSet = z.object({ accountId: z.string(), url: z.string().nullable() });

/**
 * A provider key the account (or one of its sub-accounts) brought (docs/providers.md, Bring your own key). The
 * secret itself never enters the log: it is encrypted in the `provider_keys` table; only its last four characters
 * are recorded, to recognise it.
 */
export const ProviderKeyRegistered = z.object({
  accountId: z.string(),
  subAccountId: z.string().nullable(),
  providerKeyId: z.string(),
  provider: z.string(),
  name: z.string(),
  last4: z.string(),
});

export const ProviderKeyRemoved = z.object({
  accountId: z.string(),
  subAccountId: z.string().nullable(),
  providerKeyId: z.string(),
});

export const accountEventSchemas = {
  AccountOpened,
  ApiKeyIssued,
  ApiKeyRevoked,
  ApiKeyRotated,
  AccountToppedUp,
  AccountTopUpReversed,
  AccountSettingsChanged,
  TagBudgetSet,
  TagBudgetRemoved,
  DailyUsageSummarized,
  WebhookEndpointSet,
  ProviderKeyRegistered,
  ProviderKeyRemoved,
} as const;

type Of<T extends keyof typeof accountEventSchemas> = {
  type: T;
  data: z.infer<(typeof accountEventSchemas)[T]>;
};

export type AccountOpened = Of<'AccountOpened'>;
export type ApiKeyIssued = Of<'ApiKeyIssued'>;
export type ApiKeyRevoked = Of<'ApiKeyRevoked'>;
export type AccountToppedUp = Of<'AccountToppedUp'>;
export type AccountEvent =
  | AccountOpened
  | ApiKeyIssued
  | ApiKeyRevoked
  | Of<'ApiKeyRotated'>
  | AccountToppedUp
  | Of<'AccountTopUpReversed'>
  | Of<'AccountSettingsChanged'>
  | Of<'TagBudgetSet'>
  | Of<'TagBudgetRemoved'>
  | Of<'DailyUsageSummarized'>
  | Of<'WebhookEndpointSet'>
  | Of<'ProviderKeyRegistered'>
  | Of<'ProviderKeyRemoved'>;

export const accountStream = (accountId: string) => `account-${accountId}`;
