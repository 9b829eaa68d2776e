import type { StoredEvent } from '../../events/envelope.ts';
import type { GatewayEvent } from '../../events/index.ts';
import { priceCharge } from '../contracts/money.ts';
import { usd } from './decimal.ts';
import { Findings, where } from './findings.ts';

type Settled = Extract<GatewayEvent, { type: 'SpendSettled' }>['data'];

/**
 * Every charge re-priced from the quantities and unit prices it records: the pass-through, fee and discount
 * come out the same, and what was posted plus any overrun is the priced total.
 */
export class PricingCheck {
  readonly findings = new Findings();
  /** Overruns a settlement implies, by `account/hold`, until the overrun event is seen. */
  private readonly expectedOverruns = new Map<string, { amount: bigint; at: string }>();
  priced = 0;

  apply(stored: StoredEvent, event: GatewayEvent): void {
    if (event.type === 'SpendSettled') this.settled(stored, event.data);
    if (event.type !== 'SpendOverrun') return;
    const key = `${event.data.accountId}/${event.data.holdId}`;
    const expected = this.expectedOverruns.get(key);
    const amount = BigInt(event.data.overrunNanos);
    this.expectedOverruns.delete(key);
    if (expected?.amount !== amount) {
      this.findings.fail(
        `${where(stored)}: overrun of ${usd(amount)} on hold ${event.data.holdId}; its priced charge implies ${usd(expected?.amount ?? 0n)}`,
      );
    }
  }

  finish(): void {
    for (const [key, expected] of this.expectedOverruns) {
      this.findings.fail(
        `${expected.at}: hold ${key.slice(key.indexOf('/') + 1)} was priced ${usd(expected.amount)} above what it posted, and no overrun records it`,
      );
    }
  }

  private settled(stored: StoredEvent, data: Settled): void {
    this.priced += 1;
    const at = where(stored);
    let priced: ReturnType<typeof priceCharge>;
    try {
      priced = priceCharge(
        data.charge.lines.map((l) => ({
          ...l,
          unitPriceNanosPerMillion: BigInt(l.unitPriceNanosPerMillion),
        })),
        data.charge.discount,
      );
    } catch (error) {
      this.findings.fail(`${at}: the charge cannot be re-priced: ${(error as Error).message}`);
      return;
    }
    const recorded = {
      'pass-through': BigInt(data.charge.passThroughNanos),
      fee: BigInt(data.charge.feeNanos),
      discount: BigInt(data.charge.discountNanos),
    };
    const computed = {
      'pass-through': priced.passThroughNanos,
      fee: priced.feeNanos,
      discount: priced.discountNanos,
    };
    for (const part of Object.keys(recorded) as (keyof typeof recorded)[]) {
      if (recorded[part] !== computed[part])
        this.findings.fail(
          `${at}: ${part} recorded ${usd(recorded[part])}, re-priced ${usd(computed[part])}`,
        );
    }
    const charged = BigInt(data.chargedNanos);
    if (priced.chargedNanos < charged) {
      this.findings.fail(
        `${at}: posted ${usd(charged)}, more than the re-priced ${usd(priced.chargedNanos)}`,
      );
    } else if (priced.chargedNanos > charged) {
      this.expectedOverruns.set(`${data.accountId}/${data.holdId}`, {
        amount: priced.chargedNanos - charged,
        at,
      });
    }
  }
}
