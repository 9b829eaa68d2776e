import type { Hold, Spending } from '../billing/spending.ts';
import type { CatalogModel } from '../catalog/types.ts';
import { RequestRefused } from '../contracts/errors.ts';
import { type Charge, type PriceLine, priceCharge, unitsCoveredBy } from '../contracts/money.ts';
import { release, reserve, settle } from './ledger.ts';
import type { CallContext } from './types.ts';

/**
 * A stream held in slices: an open-ended served call (a realtime stream) whose cost is known only as it goes. Its
 * money is the pipeline's as a served call's is: each slice is one hold, reserved before the stream reaches it and
 * settled once the stream has passed it, so a stream cut short has paid for what it used and no hold lives for the
 * length of a long stream; slices no use reached are released; a stream that never opened releases all; the
 * stream's one request record goes with its last settlement (or alone). The feature supplies data and pure
 * functions: the model, the price lines of so many units, how large the next slice is.
 *
 * The stream's position is counted finer than what is priced (milliseconds of audio, priced by the second): a slice
 * covers whole units, and a started unit is charged as one.
 */
export interface SlicedStream {
  /** Names the feature in what is logged. */
  name: string;
  model: CatalogModel;
  /** The price lines of so many whole units. */
  lines(units: number): PriceLine[];
  /** `byok`: the stream runs on the requester's own provider key, each slice held and charged the fee alone. */
  discount: 'none' | 'byok';
  /** Positions in one unit (1000: milliseconds in a second). */
  scale: number;
  /** The most units the next slice covers, given the positions held so far. */
  sliceUnits(covered: number): number;
  /** The fewest units a slice is granted for; with less room under a scope, nothing more is held. */
  minUnits: number;
  /** The next slice is reserved when the stream comes this close (in positions) to the end of what is held. */
  lead: number;
  /** How long a slice may stay unsettled; the ordinary hold life unless given. */
  ttlMs?: number;
  /** Whether the units come from the provider's reports rather than from what the gateway counted. */
  usageReported: boolean;
  /** What the client is told when a slice could not be held for want of the ledger (not a refusal). */
  unavailable: string;
  /** Told of every settled slice on a credential: what an operator's credential used counts towards its limits. */
  onSettled?(charge: Charge, units: number, credential: string): void;
  log(error: unknown, message: string): void;
}

interface Slice {
  hold: Hold;
  from: number;
  to: number;
}

type Context = Pick<CallContext, 'auth' | 'requestId' | 'tag' | 'log'>;

/**
 * A stream's holds, slice by slice. When a slice is refused (a cap, a tag budget or the balance), what is already
 * held is all the stream may still use: `refusal` says why, and `cover` answers no further.
 */
export class SlicedHolds {
  private readonly open: Slice[] = [];
  private coveredTo = 0;
  private usedTo = 0;
  private extending: Promise<void> | undefined;
  private settling: Promise<void> = Promise.resolve();
  private finished = false;
  private chargedNanos = 0n;
  /** The provider credential the stream runs on, by name: every slice's charge and the stream's record name it. */
  private credential: string | undefined;
  /** Why the next slice was refused; set once, and the stream ends at the end of what is held. */
  refusal: RequestRefused | undefined;

  private constructor(
    private readonly spending: Spending,
    private readonly context: Context,
    private readonly stream: SlicedStream,
  ) {}

  /** Holds the first slice, or refuses the stream with the reservation's 402. */
  static async start(spending: Spending, context: Context, stream: SlicedStream): Promise<SlicedHolds> {
    const holds = new SlicedHolds(spending, context, stream);
    await holds.reserveSlice();
    context.log?.tried(stream.model.id, stream.model.provider, 0);
    if (context.log) context.log.stream = true;
    return holds;
  }

  /** The stream opened on this credential (the first slice is held before the provider is asked). */
  runsOn(credential: string | undefined): void {
    this.credential = credential;
  }

  /** The position up to which the stream is held. */
  get covered(): number {
    return this.coveredTo;
  }

  /** Makes sure the stream up to `at` is held, reserving further slices; answers how far it is (≤ at). */
  async cover(at: number): Promise<number> {
    if (at > this.coveredTo - this.stream.lead) void this.extend();
    // A finished stream reserves nothing more: without that check, a late report would spin here for ever.
    while (at > this.coveredTo && this.refusal === undefined && !this.finished) await this.extend();
    return Math.min(at, this.coveredTo);
  }

  /** The stream has passed `at`: slices it has passed are settled. */
  used(at: number): void {
    if (at <= this.usedTo) return;
    this.usedTo = at;
    while (this.open.length > 1 && (this.open[0] as Slice).to <= at) {
      const slice = this.open.shift() as Slice;
      this.queue(() => this.settle(slice, slice.to - slice.from));
    }
  }

  /**
   * The stream is over at `end`: each open slice is settled for its share (the last one for anything past what is
   * held too: an overrun the ledger records) or released when the stream never reached it; then the record.
   */
  async finish(end: number, reason: 'failed' | 'cancelled' = 'cancelled'): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    await this.extending;
    this.used(Math.max(end, this.usedTo));
    const total = this.usedTo;
    const shares = this.open.map((slice, index) => {
      const last = index === this.open.length - 1;
      return Math.max(0, last ? total - slice.from : Math.min(total, slice.to) - slice.from);
    });
    // The stream's record goes with the last settlement, in the same append, carrying every slice's charge.
    const closing = shares.findLastIndex((share) => share > 0);
    // Slices the stream never reached are released together: many may be held ahead of what it used.
    const releases: Promise<void>[] = [];
    for (const [index, slice] of this.open.entries()) {
      const share = shares[index] as number;
      if (share > 0) this.queue(() => this.settle(slice, share, index === closing));
      else releases.push(this.release(slice, reason));
    }
    this.open.length = 0;
    await Promise.all([this.settling, ...releases]);
    await this.logAlone();
  }

  /**
   * The stream never opened (the provider refused it, or the call moves to another credential): every slice is
   * released and no record is written, so the request's record is the failure the client is answered with.
   */
  async abandon(): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    await this.extending;
    const slices = this.open.splice(0);
    await Promise.all(slices.map((slice) => this.release(slice, 'failed')));
  }

  /** No use reached an open slice: the record goes alone, with what earlier slices were charged. */
  private async logAlone(): Promise<void> {
    const record = this.context.log?.finish({
      status: 200,
      costNanos: this.chargedNanos,
      holdId: null,
      ...(this.credential !== undefined && { credential: this.credential }),
    });
    if (!record) return;
    await this.spending.logRequest(record).catch((error: unknown) => {
      this.stream.log(error, `${this.stream.name}: logging the stream failed`);
    });
  }

  private extend(): Promise<void> {
    if (this.refusal !== undefined || this.finished) return Promise.resolve();
    this.extending ??= this.reserveSlice()
      .catch((error: unknown) => {
        const refused = error instanceof RequestRefused;
        this.refusal = refused ? error : new RequestRefused('unavailable', this.stream.unavailable);
        if (!refused) this.stream.log(error, `${this.stream.name}: reserving a slice failed`);
      })
      .finally(() => {
        this.extending = undefined;
      });
    return this.extending;
  }

  private costOf(units: number): bigint {
    return priceCharge(this.stream.lines(units), this.stream.discount).chargedNanos;
  }

  private async reserveSlice(): Promise<void> {
    const { spending, stream } = this;
    const { auth, requestId, tag } = this.context;
    const sliceUnits = stream.sliceUnits(this.coveredTo);
    // The record is not the slice's: it goes with the stream's last settlement, so the hold does not carry it.
    const hold = await reserve(
      spending,
      { auth, requestId, tag },
      {
        minNanos: this.costOf(stream.minUnits),
        maxNanos: this.costOf(sliceUnits),
        ...(stream.ttlMs !== undefined && { ttlMs: stream.ttlMs }),
      },
      stream.model.id,
    );
    // Slices are whole units, so the units billed per slice add up to the stream's units.
    const covers =
      unitsCoveredBy((units) => this.costOf(units), hold.grantedNanos, sliceUnits) * stream.scale;
    if (this.finished) {
      await release(spending, hold, 'cancelled');
      return;
    }
    this.open.push({ hold, from: this.coveredTo, to: this.coveredTo + covers });
    this.coveredTo += covers;
  }

  /** Settles a slice for its share: whole units, a started unit counting as one. */
  private async settle(slice: Slice, share: number, closing = false): Promise<void> {
    const { spending, stream } = this;
    const requestLog = this.context.log;
    const credential = this.credential;
    const units = Math.ceil(share / stream.scale);
    const charge = priceCharge(stream.lines(units), stream.discount);
    const hold = closing && requestLog ? { ...slice.hold, log: requestLog } : slice.hold;
    // What the stream was charged so far is in its requester's money (a sub-account's price), as each settle says.
    const charged = await settle(
      spending,
      hold,
      stream.model,
      { charge, usageReported: stream.usageReported, units, ...(credential !== undefined && { credential }) },
      closing ? this.chargedNanos + charge.chargedNanos : undefined,
    );
    this.chargedNanos += charged;
    if (credential !== undefined) stream.onSettled?.(charge, units, credential);
  }

  private release(slice: Slice, reason: 'failed' | 'cancelled'): Promise<void> {
    return release(this.spending, slice.hold, reason).catch((error: unknown) => {
      this.stream.log(error, `${this.stream.name}: releasing a slice failed`);
    });
  }

  private queue(work: () => Promise<void>): void {
    this.settling = this.settling.then(work).catch((error: unknown) => {
      this.stream.log(error, `${this.stream.name}: settling a slice failed`);
    });
  }
}
