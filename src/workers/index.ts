import type pg from 'pg';
import { accountsWithExpiredHolds } from '../../projections/holds/index.ts';
import { dailyUsage } from '../../projections/usage/index.ts';
import type { AccountService } from '../accounts/service.ts';
import type { Spending } from '../billing/spending.ts';

export interface WorkerDeps {
  pool: pg.Pool;
  spending: Spending;
  accounts: AccountService;
  clock: () => Date;
  log: (line: string) => void;
  expiryIntervalMs?: number;
  summaryIntervalMs?: number;
  /** The providers' cost reports against the ledger, when a provider has an admin key (src/reconciliation). */
  reconciler?: { providers(): string[]; reconcile(provider: string, day: string): Promise<unknown> };
  reconcileIntervalMs?: number;
}

/** A daily summary waits this long into the UTC day, so that yesterday's last charges are projected. */
const SUMMARY_DELAY_MS = 5 * 60 * 1000;
const SUMMARY_LOOKBACK_DAYS = 3;
const DAY_MS = 24 * 3600 * 1000;
/** Providers' cost reports fill in over the hours after a day ends; the day is reconciled from then. */
const RECONCILE_DELAY_MS = 3 * 3600 * 1000;

/**
 * Background work read from the read models: releasing holds that expired unsettled, and recording each
 * account's usage of the previous UTC day. Both are idempotent (the deciders ignore repeats), so every instance
 * may run them.
 */
export function startWorkers(deps: WorkerDeps): { stop(): Promise<void> } {
  const controller = new AbortController();
  const summarized = new Set<string>();
  const expire = async () => {
    for (const accountId of await accountsWithExpiredHolds(deps.pool, deps.clock())) {
      await deps.spending.expire(accountId);
    }
  };
  // The last few days, so that a day during which no gateway was up to summarize it is caught up later.
  const summarize = async () => {
    const latest = deps.clock().getTime() - SUMMARY_DELAY_MS - DAY_MS;
    for (let back = SUMMARY_LOOKBACK_DAYS - 1; back >= 0; back--) {
      const day = new Date(latest - back * DAY_MS).toISOString().slice(0, 10);
      if (summarized.has(day)) continue;
      for (const row of await dailyUsage(deps.pool, day)) {
        await deps.accounts.summarizeDay(row.account_id, day, {
          requests: Number(row.requests),
          costNanos: BigInt(row.cost_nanos),
          units: Number(row.units),
        });
      }
      summarized.add(day);
    }
  };
  // The day before, once per instance and provider; a failed report is asked again on the next pass.
  const reconciled = new Set<string>();
  const reconcile = async () => {
    if (!deps.reconciler) return;
    const day = new Date(deps.clock().getTime() - RECONCILE_DELAY_MS - DAY_MS).toISOString().slice(0, 10);
    for (const provider of deps.reconciler.providers()) {
      if (reconciled.has(`${provider} ${day}`)) continue;
      await deps.reconciler
        .reconcile(provider, day)
        .then(() => reconciled.add(`${provider} ${day}`))
        .catch((e) => deps.log(`reconciliation of ${provider} for ${day} failed: ${e}`));
    }
  };
  const loops = [
    every(deps.expiryIntervalMs ?? 30_000, expire, controller.signal, (e) =>
      deps.log(`hold expiry failed: ${e}`),
    ),
    every(deps.reconcileIntervalMs ?? 600_000, reconcile, controller.signal, (e) =>
      deps.log(`reconciliation failed: ${e}`),
    ),
    every(deps.summaryIntervalMs ?? 60_000, summarize, controller.signal, (e) =>
      deps.log(`daily summary failed: ${e}`),
    ),
  ];
  return {
    async stop() {
      controller.abort();
      await Promise.allSettled(loops);
    },
  };
}

export async function every(
  ms: number,
  work: () => Promise<void>,
  signal: AbortSignal,
  onError: (e: unknown) => void,
) {
  while (!signal.aborted) {
    await new Promise<void>((resolve) => {
      const stop = () => {
        clearTimeout(timer);
        resolve();
      };
      // The listener goes with the timer, so a long-lived signal does not collect one per pass.
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', stop);
        resolve();
      }, ms);
      signal.addEventListener('abort', stop, { once: true });
    });
    if (signal.aborted) return;
    await work().catch(onError);
  }
}
