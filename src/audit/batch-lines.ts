import type { StoredEvent } from '../../events/envelope.ts';
import type { GatewayEvent } from '../../events/index.ts';
import { lineOfRequest } from '../batches/output.ts';
import { ownKeyName } from '../pipeline/own-key.ts';
import { usd } from './decimal.ts';
import { Findings, where } from './findings.ts';

/** A batch line's request id is `{batchId}-{line}` (src/batches/output.ts), and batch ids start `batch_`. */
const BATCH_LINE_REQUEST = /^(batch_[^-]+)-\d+$/;

/**
 * The prices a batch line is charged at: a provider's batch API, the built-in models' half, or the waived fee; or,
 * served on its requester's own provider key, the fee alone (`byok`, checked apart by `ownKeyWhy`).
 */
const LINE_DISCOUNTS: ReadonlySet<string> = new Set(['batch', 'batch_api', 'batch_fee']);

/** Who may have brought the key a line was served on: its batch's account, or the sub-account that made it. */
const ownerKey = (accountId: string, subAccountId: string | null, provider: string, name: string) =>
  JSON.stringify([accountId, subAccountId, provider, name]);

interface Settle {
  requestId: string;
  accountId: string;
  holdId: string;
  amount: bigint;
  discount: string;
  credential: string | undefined;
  provider: string;
  at: string;
}

interface Overrun {
  requestId: string;
  holdId: string;
  amount: bigint;
}

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
 * and no finished line claims a cost that was never charged. A line's charges are those settled under its request
 * id, to its batch's account, at a batch price or at the fee alone on its requester's own key (with their
 * overruns): any other charge under that id is not the line's (a client's request that an earlier version recorded
 * under the client's `X-Request-Id`), and a line that claims it fails. A batch still running may have lines charged
 * and not yet recorded; only a batch that has ended is held to it. Sums do not depend on order.
 */
export class BatchLineBook {
  readonly findings = new Findings();
  private readonly settles: Settle[] = [];
  private readonly overruns: Overrun[] = [];
  private readonly finished = new Map<string, FinishedLine>();
  private readonly batches = new Map<
    string,
    { status: 'running' | 'ended'; accountId: string; subAccountId: string | null }
  >();
  /** Every own provider key ever registered, by owner, provider and name (`ownerKey`). */
  private readonly ownKeys = new Set<string>();
  checked = 0;

  apply(stored: StoredEvent, event: GatewayEvent): void {
    switch (event.type) {
      case 'BatchCreated':
        if (!this.batches.has(event.data.batchId))
          this.batches.set(event.data.batchId, {
            status: 'running',
            accountId: event.data.accountId,
            subAccountId: event.data.subAccountId ?? null,
          });
        return;
      case 'ProviderKeyRegistered': {
        const { accountId, subAccountId, provider, name } = event.data;
        this.ownKeys.add(ownerKey(accountId, subAccountId, provider, name));
        return;
      }
      case 'BatchCompleted':
      case 'BatchExpired':
      case 'BatchCancelled':
      case 'BatchFailed': {
        const batch = this.batches.get(event.data.batchId);
        if (batch) batch.status = 'ended';
        return;
      }
      case 'BatchLineFinished':
        this.finished.set(event.data.requestId, {
          cost: BigInt(event.data.costNanos),
          at: where(stored),
          lostEarlier: event.data.error?.code === 'result_lost' && event.data.costNanos === '0',
        });
        return;
      case 'SpendSettled':
        if (BATCH_LINE_REQUEST.test(event.data.requestId))
          this.settles.push({
            requestId: event.data.requestId,
            accountId: event.data.accountId,
            holdId: event.data.holdId,
            // A line records what its requester was charged: a sub-account's price (docs/billing.md, Reselling).
            amount: BigInt(event.data.priceNanos ?? event.data.chargedNanos),
            discount: event.data.charge.discount,
            credential: event.data.charge.credential,
            provider: event.data.charge.provider,
            at: where(stored),
          });
        return;
      case 'SpendOverrun':
        if (BATCH_LINE_REQUEST.test(event.data.requestId))
          this.overruns.push({
            requestId: event.data.requestId,
            holdId: event.data.holdId,
            amount: BigInt(event.data.priceNanos ?? event.data.overrunNanos),
          });
        return;
      default:
        return;
    }
  }

  /** The batch a request id is a line of, when the log has that batch. */
  private batchOf(requestId: string) {
    const batchId = BATCH_LINE_REQUEST.exec(requestId)?.[1];
    const batch = batchId === undefined ? undefined : this.batches.get(batchId);
    return batchId !== undefined && batch && lineOfRequest(batchId, requestId) !== undefined
      ? batch
      : undefined;
  }

  /**
   * Why a charge of the fee alone (`byok`) under a line's id is not the line's: a line is charged so only when served
   * on its requester's own key, which its charge names (`byok:<name>`), and which the batch's account or the
   * sub-account that made the batch registered for the provider.
   */
  private ownKeyWhy(
    settle: Settle,
    batch: { accountId: string; subAccountId: string | null },
  ): string | undefined {
    const name = ownKeyName(settle.credential);
    if (name === undefined)
      return `charged at discount byok, but not on an own key (${settle.credential ?? 'none'})`;
    const owners = [null, ...(batch.subAccountId === null ? [] : [batch.subAccountId])];
    return owners.some((owner) => this.ownKeys.has(ownerKey(batch.accountId, owner, settle.provider, name)))
      ? undefined
      : `charged at discount byok on byok:${name}, which is no ${settle.provider} key of the batch's owner`;
  }

  /** Each line's own charges, and the charges under a line's id that are not the line's (by request id). */
  private sortCharges() {
    const charges = new Map<string, LineCharge>();
    const foreign = new Map<string, string[]>();
    const lineHolds = new Set<string>();
    for (const settle of this.settles) {
      const batch = this.batchOf(settle.requestId);
      if (!batch) continue;
      const why =
        settle.accountId !== batch.accountId
          ? `charged to ${settle.accountId}, not to the batch's account`
          : settle.discount === 'byok'
            ? this.ownKeyWhy(settle, batch)
            : !LINE_DISCOUNTS.has(settle.discount)
              ? `charged at discount ${settle.discount}, not at a batch price`
              : undefined;
      if (why) {
        const found = foreign.get(settle.requestId) ?? [];
        found.push(`${settle.at}: ${usd(settle.amount)} ${why}`);
        foreign.set(settle.requestId, found);
        continue;
      }
      lineHolds.add(settle.holdId);
      const line = charges.get(settle.requestId) ?? { charged: 0n, settled: false };
      line.charged += settle.amount;
      line.settled = true;
      charges.set(settle.requestId, line);
    }
    for (const overrun of this.overruns) {
      const line = charges.get(overrun.requestId);
      if (line && lineHolds.has(overrun.holdId)) line.charged += overrun.amount;
    }
    return { charges, foreign };
  }

  finish(): void {
    const { charges, foreign } = this.sortCharges();
    for (const [requestId, charge] of charges) {
      const status = this.batchOf(requestId)?.status;
      if (status === undefined) continue;
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
    const claimsOthers = (requestId: string) => {
      const line = this.finished.get(requestId);
      return line !== undefined && line.cost !== 0n && !charges.get(requestId)?.settled;
    };
    for (const [requestId, line] of this.finished) {
      if (!claimsOthers(requestId)) continue;
      const others = foreign.get(requestId);
      this.findings.fail(
        others
          ? `${line.at}: batch line ${requestId} records a cost of ${usd(line.cost)} that is not its own: the charges under its id are not the line's (${others.join('; ')})`
          : `${line.at}: batch line ${requestId} records a cost of ${usd(line.cost)} that was never charged`,
      );
    }
    for (const [requestId, others] of foreign) {
      if (claimsOthers(requestId)) continue;
      this.findings.warn(
        `a request that is not batch line ${requestId} was recorded under its id (${others.join('; ')}); the line does not claim it`,
      );
    }
  }
}
