import type { BudgetEvent } from '../../events/budget.ts';
import type { Headroom, Limits } from './decide.ts';
import { pricedTotal, subAccountHeadroom, todayOf } from './resold.ts';
import { type BudgetState, creditsOf, subAccountNotice } from './state.ts';

// The notices a budget stream raises once each per month (balance low or exhausted, a sub-account's cap, a tag's
// thresholds), apart from the decisions on holds that raise them.

/** Thresholds of a tag's monthly budget at which `usage.threshold.exceeded` fires. */
export const TAG_THRESHOLDS = [80, 100] as const;

/** Share of a cap that must already be posted before a refusal counts as the cap being reached. */
export const REACHED_PERCENT = 90n;

/**
 * Notices a refused reservation raises (once each per month) when the scope it ran into is all but used up.
 * Reservations stop spending just short of a cap, so waiting for spending to cross it would never fire; a big
 * request refused while most of the cap is still free is no notice at all.
 */
export function refusalNotices(state: BudgetState, limits: Limits, tightest: Headroom): BudgetEvent[] {
  const base = { accountId: state.accountId, month: state.month };
  const reached = tightest.spentNanos * 100n >= tightest.capNanos * REACHED_PERCENT;
  switch (tightest.scope) {
    case 'account': {
      const balance = creditsOf(state, limits.toppedUpNanos) - state.lifetimeChargedNanos;
      if (state.raised.has('balance.exhausted') || balance >= limits.balanceLowThresholdNanos) return [];
      return [{ type: 'BalanceExhausted', data: { ...base, balanceNanos: balance.toString() } }];
    }
    case 'sub_account': {
      const id = limits.subAccount?.id as string;
      const period = tightest.period?.start;
      if (!reached || state.raised.has(subAccountNotice(id, period))) return [];
      return [
        {
          type: 'SubAccountSpendExceeded',
          data: {
            ...base,
            subAccountId: id,
            capNanos: tightest.capNanos.toString(),
            spentNanos: tightest.spentNanos.toString(),
            ...(period !== undefined && { periodStart: period }),
          },
        },
      ];
    }
    case 'tag': {
      const tag = limits.tag?.name as string;
      if (!reached || state.raised.has(`tag:${tag}:100`)) return [];
      return [
        {
          type: 'TagUsageThresholdExceeded',
          data: {
            ...base,
            tag,
            capNanos: tightest.capNanos.toString(),
            spentNanos: tightest.spentNanos.toString(),
            thresholdPercent: 100,
          },
        },
      ];
    }
    default: {
      const _exhaustive: never = tightest.scope;
      return _exhaustive;
    }
  }
}

/** Notices a settlement raises when it carries spending across a threshold. */
export function thresholdNotices(before: BudgetState, settled: BudgetEvent[], limits: Limits): BudgetEvent[] {
  const charged = settled.reduce((sum, e) => {
    if (e.type === 'SpendSettled') return sum + BigInt(e.data.chargedNanos);
    if (e.type === 'SpendOverrun') return sum + BigInt(e.data.overrunNanos);
    return sum;
  }, 0n);
  const base = { accountId: before.accountId, month: before.month };
  const notices: BudgetEvent[] = [];
  const balance = creditsOf(before, limits.toppedUpNanos) - before.lifetimeChargedNanos - charged;
  if (balance <= 0n && !before.raised.has('balance.exhausted')) {
    notices.push({ type: 'BalanceExhausted', data: { ...base, balanceNanos: balance.toString() } });
  } else if (balance < limits.balanceLowThresholdNanos && !before.raised.has('balance.low')) {
    notices.push({
      type: 'BalanceLowReached',
      data: {
        ...base,
        balanceNanos: balance.toString(),
        thresholdNanos: limits.balanceLowThresholdNanos.toString(),
      },
    });
  }
  if (limits.subAccount) {
    const id = limits.subAccount.id;
    // In the sub-account's price, over the period its cap counts.
    const scope = subAccountHeadroom(before, limits.subAccount, todayOf(before, limits));
    const period = scope.period?.start;
    const spent = scope.spentNanos + pricedTotal(settled);
    if (spent >= limits.subAccount.capNanos && !before.raised.has(subAccountNotice(id, period))) {
      notices.push({
        type: 'SubAccountSpendExceeded',
        data: {
          ...base,
          subAccountId: id,
          capNanos: limits.subAccount.capNanos.toString(),
          spentNanos: spent.toString(),
          ...(period !== undefined && { periodStart: period }),
        },
      });
    }
  }
  if (limits.tag && limits.tag.capNanos !== null && limits.tag.capNanos > 0n) {
    const { name, capNanos } = limits.tag;
    const spent = (before.tagCharged.get(name) ?? 0n) + charged;
    for (const percent of TAG_THRESHOLDS) {
      if (spent * 100n >= capNanos * BigInt(percent) && !before.raised.has(`tag:${name}:${percent}`)) {
        notices.push({
          type: 'TagUsageThresholdExceeded',
          data: {
            ...base,
            tag: name,
            capNanos: capNanos.toString(),
            spentNanos: spent.toString(),
            thresholdPercent: percent,
          },
        });
      }
    }
  }
  return notices;
}
