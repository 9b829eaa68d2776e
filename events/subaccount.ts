import { z } from 'zod';
import { Nanos } from './money.ts';

/** Events of the `subaccount-{subAccountId}` stream. */

/** A markup in hundredths of a percent (`markup_percent` 12.5 is 1250): an integer, so prices never go through a float. */
const MarkupBasisPoints = z.number().int().min(0).max(100_000);

/** The first override whose model pattern (`*` for any run of characters) matches wins over the sub-account's markup. */
export const PriceOverride = z.object({ model: z.string(), markupBasisPoints: MarkupBasisPoints });

/**
 * The reseller's settings of a sub-account beyond its cap: its price book (a markup over what the account pays,
 * with per-model overrides), how its cap renews, its tokens-per-minute limit and the models it may use. Absent in
 * events written before they existed: no markup, a lifetime cap, no token limit, every model.
 */
const ResellerSettings = {
  markupBasisPoints: MarkupBasisPoints.optional(),
  priceOverrides: z.array(PriceOverride).optional(),
  /** How the spend cap renews (UTC calendar periods); null: for life. */
  spendCapReset: z.enum(['daily', 'weekly', 'monthly']).nullable().optional(),
  /** Tokens per minute, input and output; null: no limit of its own (the account's applies). */
  rateLimitTpm: z.number().int().positive().nullable().optional(),
  /** Model patterns it may use; null: every model. */
  allowedModels: z.array(z.string()).nullable().optional(),
};

export const SubAccountCreated = z.object({
  subAccountId: z.string(),
  accountId: z.string(),
  name: z.string(),
  externalRef: z.string().nullable(),
  /** Lifetime spend cap. */
  spendCapNanos: Nanos,
  /** The effective limit: what was asked for, capped at the account's own. */
  rateLimitRpm: z.number().int().positive(),
  defaultTag: z.string().nullable(),
  keyId: z.string(),
  keyHash: z.string().regex(/^[0-9a-f]{64}$/),
  keyPrefix: z.string(),
  ...ResellerSettings,
});

export const SubAccountUpdated = z.object({
  subAccountId: z.string(),
  accountId: z.string(),
  name: z.string().optional(),
  externalRef: z.string().nullable().optional(),
  spendCapNanos: Nanos.optional(),
  rateLimitRpm: z.number().int().positive().optional(),
  defaultTag: z.string().nullable().optional(),
  ...ResellerSettings,
});

/** Every key of the sub-account stops working at once (`keyId` names its first); its history stays. */
export const SubAccountDeleted = z.object({
  subAccountId: z.string(),
  accountId: z.string(),
  keyId: z.string(),
});

/**
 * Another named key of the sub-account (its first, named `default`, comes with `SubAccountCreated`). Every key of a
 * sub-account spends under its cap, limits and usage.
 */
export const SubAccountKeyIssued = z.object({
  subAccountId: z.string(),
  accountId: z.string(),
  keyId: z.string(),
  keyHash: z.string().regex(/^[0-9a-f]{64}$/),
  keyPrefix: z.string(),
  name: z.string(),
  /** When it stops authenticating (ISO time); null: never. */
  expiresAt: z.string().nullable(),
});

/** The key stops working at once; the sub-account and its other keys stay. */
export const SubAccountKeyRevoked = z.object({
  subAccountId: z.string(),
  accountId: z.string(),
  keyId: z.string(),
});

/** As `ApiKeyRotated` (events/account.ts), for a sub-account's key. */
export const SubAccountKeyRotated = z.object({
  subAccountId: z.string(),
  accountId: z.string(),
  keyId: z.string(),
  replacedBy: z.string(),
  expiresAt: z.string(),
});

export const subAccountEventSchemas = {
  SubAccountCreated,
  SubAccountUpdated,
  SubAccountDeleted,
  SubAccountKeyIssued,
  SubAccountKeyRevoked,
  SubAccountKeyRotated,
} as const;

type Of<T extends keyof typeof subAccountEventSchemas> = {
  type: T;
  data: z.infer<(typeof subAccountEventSchemas)[T]>;
};
export type SubAccountEvent = {
  [T in keyof typeof subAccountEventSchemas]: Of<T>;
}[keyof typeof subAccountEventSchemas];

export const subAccountStream = (subAccountId: string) => `subaccount-${subAccountId}`;
