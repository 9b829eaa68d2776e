import { z } from 'zod';
import { Nanos } from './money.ts';
import { RequestCompleted } from './request.ts';

/**
 * Events of the `budget-{accountId}_{yyyymm}` stream: every hold, charge and release of one account in one
 * UTC calendar month, and the opening balances carried from the month before. This stream is the consistency
 * boundary of spending: every cap is checked against it, at one revision, in one append.
 */

const Month = z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/);
const Day = z.string().regex(/^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/);

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
  /**
   * A sub-account's hold in its own price (docs/billing.md, Reselling): what counts against its spend cap, while
   * `amountNanos`, what its account would pay, counts against the balance and the tag budget. Absent on the account's
   * own holds and on holds written before price books: the price is then `amountNanos`.
   */
  priceNanos: Nanos.optional(),
  /** The markup of the price book in force for the hold's model, in hundredths of a percent (a sub-account's hold). */
  markupBasisPoints: z.number().int().min(0).optional(),
  /** The revision of the sub-account's stream that price book was read at. */
  priceBookRevision: z.number().int().min(0).optional(),
  /** The UTC day (`YYYY-MM-DD`) the hold was decided on: the period a renewing spend cap was checked in. */
  day: Day.optional(),
});

/** An adjustment as the month streams carry it: what a repeat of its reference is answered with. */
export const AdjustmentRecord = z.object({
  amountNanos: Nanos,
  reason: z.string(),
  reverses: z.string().optional(),
});

const Carried = z.object({
  lifetimeChargedNanos: Nanos,
  /** Lifetime charges per sub-account, in its price (what a lifetime spend cap counts). */
  subAccountChargedNanos: z.record(z.string(), Nanos),
  openHolds: z.array(Hold),
  /** Lifetime adjustments (credits less debits); absent when the account has none. */
  adjustedNanos: Nanos.optional(),
  /** Every adjustment by its reference, so that a reference or a top-up's reversal is recorded once for good. */
  adjustments: z.record(z.string(), AdjustmentRecord).optional(),
  /**
   * A sub-account's spending (in its price) per UTC day of the month's last ISO week when that week runs on into the
   * next month: what a weekly cap still counts there. Absent when there is none.
   */
  subAccountDayChargedNanos: z.record(z.string(), z.record(Day, Nanos)).optional(),
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
  /**
   * The credential of the provider that served it, by its name (never the secret): the operator's, or `byok:<name>`
   * for the client's own key; absent before pools.
   */
  credential: z.string().optional(),
  lines: z.array(PriceLine),
  passThroughNanos: Nanos,
  feeNanos: Nanos,
  /** `byok`: served with the client's own provider key; `chargedNanos` is the fee alone (docs/billing.md). */
  discount: z.enum(['none', 'cache', 'batch', 'batch_api', 'batch_fee', 'byok']),
  discountNanos: Nanos,
  /** False when the provider reported no usage and the quantities are the gateway's own estimate. */
  usageReported: z.boolean(),
  /** The natural unit count reported in usage (tokens for chat). */
  units: z.number().int().nonnegative(),
});

/**
 * What a sub-account's charge comes to in its own price (docs/billing.md, Reselling): `chargedNanos` (or
 * `overrunNanos`) is what its account pays, `priceNanos` what the sub-account is charged (against its cap, in its
 * usage and statement), `marginNanos` = price − cost, the account's. Absent on the account's own charges and on
 * charges written before price books (price = cost, no margin).
 */
const ResoldCharge = {
  priceNanos: Nanos.optional(),
  marginNanos: Nanos.optional(),
  /** The UTC day (`YYYY-MM-DD`) the charge counts in for a renewing spend cap (a sub-account's charge). */
  day: Day.optional(),
};

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
  ...ResoldCharge,
  /** The price book the charge was priced at (a sub-account's, from its hold). */
  markupBasisPoints: z.number().int().min(0).optional(),
  priceBookRevision: z.number().int().min(0).optional(),
  /**
   * The hold this settlement ends, when it was never stored on its own: carved in memory from a spend lease, or a
   * charge known before serving (a cached answer). Its fields beyond the settlement's own; it stands for the hold's
   * `SpendReserved` (amount `heldNanos`), decided just before the settlement (events/logical.ts).
   */
  reserved: Hold.pick({
    expiresAt: true,
    leaseId: true,
    priceNanos: true,
    markupBasisPoints: true,
    priceBookRevision: true,
    day: true,
  }).optional(),
  /** The request's record, stored with its settlement: it stands for the request's `RequestCompleted`. */
  request: RequestCompleted.optional(),
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
  ...ResoldCharge,
  markupBasisPoints: z.number().int().min(0).optional(),
});

export const SpendReleased = z.object({
  accountId: z.string(),
  month: Month,
  holdId: z.string(),
  amountNanos: Nanos,
  /** `returned`: what a lease's instance no longer needs of it. */
  reason: z.enum(['failed', 'cancelled', 'expired', 'returned']),
});

/**
 * The operator's credit (positive) or debit (negative) of the account's balance, decided in the budget stream, where
 * holds are known exactly: a debit never takes the balance below what open holds and leases need. `reverses` names
 * the top-up a debit gives back (once per top-up, at most what is left of it after refunds).
 */
export const BalanceAdjusted = z.object({
  accountId: z.string(),
  month: Month,
  /** The operator's reference: one adjustment per reference and account, for good. */
  reference: z.string(),
  amountNanos: Nanos,
  reason: z.string(),
  reverses: z.string().optional(),
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
  /** In the sub-account's price. */
  capNanos: Nanos,
  spentNanos: Nanos,
  /** For a renewing cap: the first day of the period reached (the notice fires once per period). */
  periodStart: Day.optional(),
});

export const budgetEventSchemas = {
  BudgetMonthOpened,
  BudgetMonthClosed,
  SpendReserved,
  SpendSettled,
  SpendOverrun,
  SpendReleased,
  BalanceAdjusted,
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
