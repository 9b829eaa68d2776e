import type { GatewayEvent } from '../../events/index.ts';
import { usd } from './decimal.ts';
import type { Findings } from './findings.ts';

/** What the caps replay knows of an account when an adjustment arrives. */
export interface AdjustedBook {
  /** Top-ups less refunds, plus adjustments: moved by the adjustment here. */
  toppedUp: bigint;
  charged: bigint;
  holds: ReadonlyMap<string, { amount: bigint }>;
  /** What is left of each top-up after refunds and reversals, by reference. */
  topUps: Map<string, bigint>;
  /** Top-ups an adjustment reversed, with that adjustment's reference. */
  reversedBy: Map<string, string>;
}

/**
 * An adjustment, replayed: a debit never takes the balance below what open holds need at that point of the log, and
 * a top-up's reversal names a top-up of the account, once, for at most what is left of it after refunds.
 */
export function checkAdjustment(
  book: AdjustedBook,
  data: Extract<GatewayEvent, { type: 'BalanceAdjusted' }>['data'],
  where: string,
  findings: Findings,
): void {
  const amount = BigInt(data.amountNanos);
  const at = `${where}: adjustment ${data.reference} of ${usd(amount)}`;
  book.toppedUp += amount;
  if (data.reverses !== undefined) {
    const left = book.topUps.get(data.reverses);
    const earlier = book.reversedBy.get(data.reverses);
    if (left === undefined)
      findings.fail(`${at} reverses top-up ${data.reverses}, which the log never records`);
    else if (earlier !== undefined)
      findings.fail(`${at} reverses top-up ${data.reverses}, already reversed by adjustment ${earlier}`);
    else if (amount >= 0n || -amount > left)
      findings.fail(`${at} reverses top-up ${data.reverses}, of which ${usd(left)} was left to reverse`);
    book.reversedBy.set(data.reverses, data.reference);
    if (left !== undefined) book.topUps.set(data.reverses, left + amount);
  }
  if (amount >= 0n) return;
  let held = 0n;
  for (const hold of book.holds.values()) held += hold.amount;
  const balance = book.toppedUp - book.charged;
  if (balance < held)
    findings.fail(
      `${at} leaves the balance at ${usd(balance)} (credits ${usd(book.toppedUp)} − charged ${usd(book.charged)}), below the ${usd(held)} held`,
    );
}
