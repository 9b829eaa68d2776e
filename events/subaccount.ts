import { z } from 'zod';
import { Nanos } from './money.ts';

/** Events of the `subaccount-{subAccountId}` stream. */

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
});

export const SubAccountUpdated = z.object({
  subAccountId: z.string(),
  accountId: z.string(),
  name: z.string().optional(),
  externalRef: z.string().nullable().optional(),
  spendCapNanos: Nanos.optional(),
  rateLimitRpm: z.number().int().positive().optional(),
  defaultTag: z.string().nullable().optional(),
});

/** The sub-account's key stops working at once; its history stays. */
export const SubAccountDeleted = z.object({
  subAccountId: z.string(),
  accountId: z.string(),
  keyId: z.string(),
});

export const subAccountEventSchemas = { SubAccountCreated, SubAccountUpdated, SubAccountDeleted } as const;

type Of<T extends keyof typeof subAccountEventSchemas> = {
  type: T;
  data: z.infer<(typeof subAccountEventSchemas)[T]>;
};
export type SubAccountEvent = Of<'SubAccountCreated'> | Of<'SubAccountUpdated'> | Of<'SubAccountDeleted'>;

export const subAccountStream = (subAccountId: string) => `subaccount-${subAccountId}`;
