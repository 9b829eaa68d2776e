import { z } from 'zod';
import { Nanos } from './money.ts';
import { RequestCompleted } from './request.ts';

/**
 * Events of the `budget-{accountId}_{yyyymm}` stream: every hold, charge and release of one account in one
 * UTC calendar month, and the opening balances carried from the month before. This stream is the consistency
 * boundary of spending: every cap is checked against it, at one revision, in one append.
 */

const Month = z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/);

export const Hold = z.object({
  holdId: z.string(),
  requestId: z.string(),
  amountNanos: Nanos,
  subAccountId: z.string().nullable(),
  tag: z.string().nullable(),
  expiresAt: z.string(),
  /**
   * A spend lease: headroom an instance holds for requests it admits in memory (docs/billing.md). Each admitted
   * request is then reserved with `leaseId`, carved out of the lease rather than out of the scopes' headroom.
   */
  lease: z.literal(true).optional(),
  /** The lease this hold was carved from. */
  leaseId: z.string().optional(),
  /**
   * The tag a sub-account named for its own analytics when it is not its scope: a sub-account spends under its
   * default tag (`tag`) whatever tag it sends, and the tag it sent is kept here (docs/billing.md). Absent otherwise.
   */
  label: z.string().optional(),
});

const Carried = z.object({
  lifetimeChargedNanos: Nanos,
  /** Lifetime charges per sub-account (spend caps are lifetime). */
  subAccountChargedNanos: z.record(z.string(), Nanos),
  openHolds: z.array(Hold),
});

export const BudgetMonthOpened = Carried.extend({ accountId: z.string(), month: Month });
export const BudgetMonthClosed = Carried.extend({ accountId: z.string(), month: Month });

export const SpendReserved = Hold.extend({ accountId: z.string(), month: Month });

export const PriceLine = z.object({
  item: z.string(),
  quantity: z.number().int().nonnegative(),
  unitPriceNanosPerMillion: Nanos,
});

export const ChargeDetail = z.object({
  model: z.string(),
  provider: z.string(),
  lines: z.array(PriceLine),
  passThroughNanos: Nanos,
  feeNanos: Nanos,
  discount: z.enum(['none', 'cache', 'batch', 'batch_api', 'batch_fee']),
  discountNanos: Nanos,
  /** False when the provider reported no usage and the quantities are the gateway's own estimate. */
  usageReported: z.boolean(),
  /** The natural unit count reported in usage (tokens for chat). */
  units: z.number().int().nonnegative(),
});

export const SpendSettled = z.object({
  accountId: z.string(),
  month: Month,
  holdId: z.string(),
  requestId: z.string(),
  subAccountId: z.string().nullable(),
  tag: z.string().nullable(),
  /** The hold's label (a sub-account's own tag beside its scope `tag`), when it has one. */
  label: z.string().optional(),
  heldNanos: Nanos,
  /** Posted against the hold: at most `heldNanos`. */
  chargedNanos: Nanos,
  releasedNanos: Nanos,
  charge: ChargeDetail,
});

/** Cost beyond the hold that the provider billed anyway: charged, never dropped, and it blocks the scope. */
export const SpendOverrun = z.object({
  accountId: z.string(),
  month: Month,
  holdId: z.string(),
  requestId: z.string(),
  subAccountId: z.string().nullable(),
  tag: z.string().nullable(),
  label: z.string().optional(),
  overrunNanos: Nanos,
  /** The model of the charge it overran (`charge.model` of its `SpendSettled`); absent in events older than it. */
  model: z.string().optional(),
});

export const SpendReleased = z.object({
  accountId: z.string(),
  month: Month,
  holdId: z.string(),
  amountNanos: Nanos,
  /** `returned`: what a lease's instance no longer needs of it. */
  reason: z.enum(['failed', 'cancelled', 'expired', 'returned']),
});

export const BalanceLowReached = z.object({
  accountId: z.string(),
  month: Month,
  balanceNanos: Nanos,
  thresholdNanos: Nanos,
});
export const BalanceExhausted = z.object({ accountId: z.string(), month: Month, balanceNanos: Nanos });
export const TagUsageThresholdExceeded = z.object({
  accountId: z.string(),
  month: Month,
  tag: z.string(),
  capNanos: Nanos,
  spentNanos: Nanos,
  thresholdPercent: z.number().int(),
});
export const SubAccountSpendExceeded = z.object({
  accountId: z.string(),
  month: Month,
  subAccountId: z.string(),
  capNanos: Nanos,
  spentNanos: Nanos,
});

export const budgetEventSchemas = {
  BudgetMonthOpened,
  BudgetMonthClosed,
  SpendReserved,
  SpendSettled,
  SpendOverrun,
  SpendReleased,
  BalanceLowReached,
  BalanceExhausted,
  TagUsageThresholdExceeded,
  SubAccountSpendExceeded,
  RequestCompleted,
} as const;

type Of<T extends keyof typeof budgetEventSchemas> = {
  type: T;
  data: z.infer<(typeof budgetEventSchemas)[T]>;
};
export type BudgetEvent = { [T in keyof typeof budgetEventSchemas]: Of<T> }[keyof typeof budgetEventSchemas];
export type HoldData = z.infer<typeof Hold>;

/** `YYYY-MM` of an instant, in UTC. */
export function monthOf(instant: Date): string {
  return instant.toISOString().slice(0, 7);
}

export function previousMonth(month: string): string {
  const [year, mon] = month.split('-').map(Number) as [number, number];
  return mon === 1 ? `${year - 1}-12` : `${year}-${String(mon - 1).padStart(2, '0')}`;
}

export function nextMonth(month: string): string {
  const [year, mon] = month.split('-').map(Number) as [number, number];
  return mon === 12 ? `${year + 1}-01` : `${year}-${String(mon + 1).padStart(2, '0')}`;
}

export const budgetStream = (accountId: string, month: string) =>
  `budget-${accountId}_${month.replace('-', '')}`;
