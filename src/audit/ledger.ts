import type { StoredEvent } from '../../events/envelope.ts';
import type { GatewayEvent } from '../../events/index.ts';
import type { Sql } from '../../projections/types.ts';
import { usd } from './decimal.ts';
import { Findings, where } from './findings.ts';

interface AccountSums {
  opened: boolean;
  toppedUp: bigint;
  adjusted: bigint;
  charged: bigint;
  references: Set<string>;
  adjustments: Set<string>;
}

export interface BalanceRow {
  account_id: string;
  balance_nanos: string;
  topped_up_nanos: string;
  adjusted_nanos: string;
  charged_nanos: string;
  top_up_count: number;
}

/**
 * Each account's top-ups, adjustments and charges added up from the log (charged = settled + overrun), to hold
 * against the `balances` read model: balance = top-ups + adjustments − charges, row by row. Sums do not depend on order, so events are
 * counted as they arrive.
 */
export class LedgerSums {
  readonly findings = new Findings();
  private readonly accounts = new Map<string, AccountSums>();
  compared = 0;
  /** Adjustments counted, for the report. */
  adjustments = 0;

  apply(stored: StoredEvent, event: GatewayEvent): void {
    if (event.type === 'AccountOpened') {
      this.sums(event.data.accountId).opened = true;
    } else if (event.type === 'AccountToppedUp') {
      const sums = this.sums(event.data.accountId);
      // The read model credits a payment reference once; the decider never records one twice.
      if (sums.references.has(event.data.reference)) {
        this.findings.fail(`${where(stored)}: top-up reference ${event.data.reference} is recorded twice`);
        return;
      }
      sums.references.add(event.data.reference);
      sums.toppedUp += BigInt(event.data.amountNanos);
    } else if (event.type === 'AccountTopUpReversed') {
      // The read model's topped_up_nanos is net of refunds, as the spending limit is.
      this.sums(event.data.accountId).toppedUp -= BigInt(event.data.amountNanos);
    } else if (event.type === 'BalanceAdjusted') {
      const sums = this.sums(event.data.accountId);
      // The budget stream records a reference once for good, whichever month it comes back in.
      if (sums.adjustments.has(event.data.reference)) {
        this.findings.fail(
          `${where(stored)}: adjustment reference ${event.data.reference} is recorded twice`,
        );
        return;
      }
      sums.adjustments.add(event.data.reference);
      sums.adjusted += BigInt(event.data.amountNanos);
      this.adjustments += 1;
    } else if (event.type === 'SpendSettled') {
      this.sums(event.data.accountId).charged += BigInt(event.data.chargedNanos);
    } else if (event.type === 'SpendOverrun') {
      this.sums(event.data.accountId).charged += BigInt(event.data.overrunNanos);
    }
  }

  private sums(accountId: string): AccountSums {
    let sums = this.accounts.get(accountId);
    if (!sums) {
      sums = {
        opened: false,
        toppedUp: 0n,
        adjusted: 0n,
        charged: 0n,
        references: new Set(),
        adjustments: new Set(),
      };
      this.accounts.set(accountId, sums);
    }
    return sums;
  }

  /** Holds the sums so far against the read model's rows (read at the same point of the log). */
  compare(rows: readonly BalanceRow[]): void {
    const seen = new Set<string>();
    for (const row of rows) {
      seen.add(row.account_id);
      this.compared += 1;
      const balance = BigInt(row.balance_nanos);
      const toppedUp = BigInt(row.topped_up_nanos);
      const adjusted = BigInt(row.adjusted_nanos);
      const charged = BigInt(row.charged_nanos);
      const at = `balances row of ${row.account_id}`;
      if (balance !== toppedUp + adjusted - charged) {
        this.findings.fail(
          `${at}: balance ${usd(balance)} ≠ top-ups ${usd(toppedUp)} + adjustments ${usd(adjusted)} − charges ${usd(charged)} = ${usd(toppedUp + adjusted - charged)}`,
        );
      }
      const sums = this.accounts.get(row.account_id);
      if (!sums?.opened) {
        this.findings.fail(`${at}: the log never opens this account`);
        continue;
      }
      if (toppedUp !== sums.toppedUp)
        this.findings.fail(`${at}: top-ups ${usd(toppedUp)}, the log adds up to ${usd(sums.toppedUp)}`);
      if (adjusted !== sums.adjusted)
        this.findings.fail(`${at}: adjustments ${usd(adjusted)}, the log adds up to ${usd(sums.adjusted)}`);
      if (charged !== sums.charged)
        this.findings.fail(`${at}: charges ${usd(charged)}, the log adds up to ${usd(sums.charged)}`);
      if (row.top_up_count !== sums.references.size)
        this.findings.fail(
          `${at}: ${row.top_up_count} top-ups counted, the log holds ${sums.references.size}`,
        );
    }
    for (const [accountId, sums] of this.accounts) {
      if (sums.opened && !seen.has(accountId)) this.findings.fail(`account ${accountId} has no balances row`);
    }
  }
}

export async function balanceRows(sql: Sql, accountId: string | undefined): Promise<BalanceRow[]> {
  const { rows } = await sql.query<BalanceRow & Record<string, unknown>>(
    `SELECT account_id, balance_nanos::text, topped_up_nanos::text, adjusted_nanos::text, charged_nanos::text,
            top_up_count
     FROM balances WHERE $1::text IS NULL OR account_id = $1 ORDER BY account_id`,
    [accountId ?? null],
  );
  return rows;
}
