import type { StoredEvent } from '../../events/envelope.ts';
import type { GatewayEvent } from '../../events/index.ts';
import { usd } from './decimal.ts';
import { Findings, where } from './findings.ts';

/** A batch line's request id is `{batchId}-{line}` (src/batches/output.ts), and batch ids start `batch_`. */
const BATCH_LINE_REQUEST = /^(batch_[^-]+)-(\d+)$/;

interface LineCharge {
  charged: bigint;
  settled: boolean;
}

interface FinishedLine {
  cost: bigint;
  at: string;
  /** Lines lost to a stop were recorded at no cost before lines carried their charge. */
  lostEarlier: boolean;
}

/**
 * A batch line is never charged without its result: every settled charge of a batch line has the line's
 * `BatchLineFinished` (which puts it in the output or error file), recording exactly what the line was charged,
 * and no finished line claims a cost that was never charged. A batch still running may have lines charged and
 * not yet recorded; only a batch that has ended is held to it. Sums do not depend on order.
 */
export class BatchLineBook {
  readonly findings = new Findings();
  private readonly charges = new Map<string, LineCharge>();
  private readonly finished = new Map<string, FinishedLine>();
  private readonly batches = new Map<string, 'running' | 'ended'>();
  checked = 0;

  apply(stored: StoredEvent, event: GatewayEvent): void {
    switch (event.type) {
      case 'BatchCreated':
        if (!this.batches.has(event.data.batchId)) this.batches.set(event.data.batchId, 'running');
        return;
      case 'BatchCompleted':
      case 'BatchExpired':
      case 'BatchCancelled':
      case 'BatchFailed':
        this.batches.set(event.data.batchId, 'ended');
        return;
      case 'BatchLineFinished':
        this.finished.set(event.data.requestId, {
          cost: BigInt(event.data.costNanos),
          at: where(stored),
          lostEarlier: event.data.error?.code === 'result_lost' && event.data.costNanos === '0',
        });
        return;
      case 'SpendSettled':
        this.charge(event.data.requestId, BigInt(event.data.chargedNanos), true);
        return;
      case 'SpendOverrun':
        this.charge(event.data.requestId, BigInt(event.data.overrunNanos), false);
        return;
      default:
        return;
    }
  }

  private charge(requestId: string, amount: bigint, settled: boolean): void {
    if (!BATCH_LINE_REQUEST.test(requestId)) return;
    const line = this.charges.get(requestId) ?? { charged: 0n, settled: false };
    line.charged += amount;
    line.settled ||= settled;
    this.charges.set(requestId, line);
  }

  finish(): void {
    for (const [requestId, charge] of this.charges) {
      const batchId = BATCH_LINE_REQUEST.exec(requestId)?.[1] as string;
      const status = this.batches.get(batchId);
      if (status === undefined || !charge.settled) continue;
      this.checked += 1;
      const line = this.finished.get(requestId);
      if (!line) {
        if (status === 'ended')
          this.findings.fail(
            `batch line ${requestId} was charged ${usd(charge.charged)} but has no finished line: its result is in neither file`,
          );
        else
          this.findings.note(`batch line ${requestId} is charged and not yet recorded; its batch is running`);
        continue;
      }
      if (line.cost === charge.charged) continue;
      const message = `${line.at}: batch line ${requestId} records a cost of ${usd(line.cost)}, but was charged ${usd(charge.charged)}`;
      if (line.lostEarlier) this.findings.warn(`${message} (a result lost to a stop, recorded at no cost)`);
      else this.findings.fail(message);
    }
    for (const [requestId, line] of this.finished) {
      if (line.cost !== 0n && !this.charges.get(requestId)?.settled)
        this.findings.fail(
          `${line.at}: batch line ${requestId} records a cost of ${usd(line.cost)} that was never charged`,
        );
    }
  }
}
