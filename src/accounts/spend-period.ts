import { dayOf, inPeriod, periodEnd, weekStart } from '../../commands/budget/periods.ts';
import { spendingSince } from '../../projections/statements/index.ts';
import type { Sql } from '../../projections/types.ts';
import type { LiveSubAccount } from './live-state.ts';

export interface PeriodSpending {
  /** Spent in the period the cap counts now, in the sub-account's price: for life, this UTC month, week or day. */
  spentNanos: bigint;
  /** When the period ends and the cap renews; null for a lifetime cap. */
  resetsAt: Date | null;
}

/**
 * What each sub-account spent in its cap's current period, from the statements read model (its charges per budget
 * month and day), as the budget stream counts it: a monthly cap by the month a charge is booked to, a daily or weekly
 * one by the day each charge records. `lifetime` is each one's spending for life (a cap without renewal).
 */
export async function periodSpending(
  sql: Sql,
  accountId: string,
  subs: readonly LiveSubAccount[],
  lifetime: ReadonlyMap<string, bigint>,
  now: Date,
): Promise<Map<string, PeriodSpending>> {
  const today = dayOf(now);
  const month = today.slice(0, 7);
  const since = [weekStart(today), `${month}-01`].sort()[0] as string;
  const renewing = subs.filter((s) => s.spendCapReset !== null);
  const rows =
    renewing.length === 0
      ? []
      : await spendingSince(sql, accountId, since, subs.length === 1 ? subs[0]?.subAccountId : undefined);
  const result = new Map<string, PeriodSpending>();
  for (const sub of subs) {
    const reset = sub.spendCapReset;
    if (reset === null) {
      result.set(sub.subAccountId, { spentNanos: lifetime.get(sub.subAccountId) ?? 0n, resetsAt: null });
      continue;
    }
    let spent = 0n;
    for (const row of rows) {
      if (row.sub_account_id !== sub.subAccountId) continue;
      const counts = reset === 'monthly' ? row.month === month : inPeriod(reset, row.day, today);
      if (counts) spent += BigInt(row.price_nanos);
    }
    result.set(sub.subAccountId, { spentNanos: spent, resetsAt: periodEnd(reset, today) });
  }
  return result;
}

/** The period figures of a sub-account's record (`GET /v1/sub-accounts/{id}`). */
export function periodView(period: PeriodSpending | undefined): {
  spent_this_period_cents: number;
  period_resets_at: number | null;
} {
  return {
    spent_this_period_cents: Number(period?.spentNanos ?? 0n) / 1e7,
    period_resets_at: period?.resetsAt ? Math.floor(period.resetsAt.getTime() / 1000) : null,
  };
}
