import type { StoredEvent } from '../../events/envelope.ts';
import type { GatewayEvent } from '../../events/index.ts';
import { usd } from './decimal.ts';
import { Findings, where } from './findings.ts';

export interface StatementTotalRow {
  account_id: string;
  sub_account_id: string;
  month: string;
  price_nanos: string;
}

/**
 * Each sub-account's statement total per month, held against its charges in the log: the statements read model
 * (the source of `GET /v1/sub-accounts/{id}/statement`) must add up, per sub-account and budget month, to the
 * customer's price of every charge and overrun booked to it. Sums do not depend on order, so events are counted as
 * they arrive; the rows are read at the same point of the log.
 */
export class StatementSums {
  readonly findings = new Findings();
  private readonly sums = new Map<string, { price: bigint; at: string }>();
  compared = 0;

  apply(stored: StoredEvent, event: GatewayEvent): void {
    if (event.type !== 'SpendSettled' && event.type !== 'SpendOverrun') return;
    const d = event.data;
    if (d.subAccountId === null) return;
    const cost = event.type === 'SpendSettled' ? event.data.chargedNanos : event.data.overrunNanos;
    const key = JSON.stringify([d.accountId, d.subAccountId, d.month]);
    const sum = this.sums.get(key) ?? { price: 0n, at: where(stored) };
    sum.price += BigInt(d.priceNanos ?? cost);
    this.sums.set(key, sum);
  }

  compare(rows: readonly StatementTotalRow[], accountId: string | undefined): void {
    const seen = new Set<string>();
    for (const row of rows) {
      const key = JSON.stringify([row.account_id, row.sub_account_id, row.month]);
      seen.add(key);
      this.compared += 1;
      const logged = this.sums.get(key)?.price ?? 0n;
      if (BigInt(row.price_nanos) !== logged)
        this.findings.fail(
          `statement of sub-account ${row.sub_account_id} for ${row.month}: total ${usd(BigInt(row.price_nanos))}; its charges in the log add up to ${usd(logged)}`,
        );
    }
    for (const [key, sum] of this.sums) {
      const [account, sub, month] = JSON.parse(key) as [string, string, string];
      if (seen.has(key) || (accountId !== undefined && account !== accountId)) continue;
      this.findings.fail(
        `sub-account ${sub} was charged ${usd(sum.price)} in ${month} (first at ${sum.at}), and has no statement for it`,
      );
    }
  }
}
