import type { KeyHolder } from '../../accounts/live-state.ts';
import type { RequestLog } from '../../billing/request-log.ts';
import type { Hold, Spending } from '../../billing/spending.ts';
import type { CatalogModel } from '../../catalog/types.ts';
import { RequestRefused } from '../../contracts/errors.ts';
import { type Charge, priceCharge } from '../../contracts/money.ts';
import { release, reserve, settle } from '../../pipeline/ledger.ts';
import { audioLine, costOfSeconds, MIN_SLICE_SECONDS, SLICE_SECONDS, secondsCoveredBy } from './pricing.ts';

/** The next slice is reserved when the audio comes this close to the end of what is held. */
export const LEAD_MS = 10_000;

interface Slice {
  hold: Hold;
  fromMs: number;
  toMs: number;
}

export interface AudioHoldsOptions {
  spending: Spending;
  auth: KeyHolder;
  requestId: string;
  tag: string | null;
  model: CatalogModel;
  /** Nano-dollars per million seconds. */
  unitPrice: bigint;
  /** Whether durations come from the provider (compressed audio) rather than from the bytes counted. */
  usageReported: boolean;
  /** The most audio one hold may cover; `SLICE_SECONDS` unless given. */
  maxSliceSeconds?: number;
  /** How long a slice may stay unsettled; the ordinary hold life unless given. */
  ttlMs?: number;
  log: (error: unknown, message: string) => void;
  /** The stream's record in the request log: one record for the whole stream, with the sum of its slices. */
  requestLog?: RequestLog;
  /**
   * `byok`: the stream runs on the requester's own provider key, so each slice is held and charged the platform
   * fee alone (the provider bills the requester for the audio).
   */
  byok?: boolean;
  /** Told of every settled slice on a credential: what an operator's credential used counts towards its limits. */
  onSettled?: (charge: Charge, seconds: number, credential: string) => void;
}

/**
 * A stream's audio, held ahead in slices: each slice is one hold for up to a minute of audio, reserved before the
 * audio reaches it and settled once the audio has passed it. Settled slices are charges of their own, so a stream
 * cut short has paid for what it used, and no hold lives for the length of a long stream. When a slice is refused
 * (a cap, a tag budget or the balance), the audio already held is all the stream may still use.
 */
export class AudioHolds {
  private readonly open: Slice[] = [];
  private coveredMs = 0;
  private usedMs = 0;
  private extending: Promise<void> | undefined;
  private settling: Promise<void> = Promise.resolve();
  private finished = false;
  private chargedNanos = 0n;
  /** The provider credential the stream runs on, by name: every slice's charge and the stream's record name it. */
  private credential: string | undefined;
  /** Why the next slice was refused; set once, and the stream ends at the end of what is held. */
  refusal: RequestRefused | undefined;

  private constructor(private readonly options: AudioHoldsOptions) {}

  /** Holds the first slice, or refuses the stream with the reservation's 402. */
  static async start(options: AudioHoldsOptions): Promise<AudioHolds> {
    const holds = new AudioHolds(options);
    await holds.reserveSlice();
    if (options.requestLog) {
      options.requestLog.tried(options.model.id, options.model.provider, 0);
      options.requestLog.stream = true;
    }
    return holds;
  }

  /** The stream opened on this credential (the first slice is held before the provider is asked). */
  runsOn(credential: string | undefined): void {
    this.credential = credential;
  }

  private get discount() {
    return this.options.byok ? ('byok' as const) : ('none' as const);
  }

  get covered(): number {
    return this.coveredMs;
  }

  /** Makes sure audio up to `ms` is held, reserving further slices; answers how much of it is (≤ ms). */
  async cover(ms: number): Promise<number> {
    if (ms > this.coveredMs - LEAD_MS) void this.extend();
    // A finished stream reserves nothing more: without that check, a late report would spin here for ever.
    while (ms > this.coveredMs && this.refusal === undefined && !this.finished) await this.extend();
    return Math.min(ms, this.coveredMs);
  }

  /** Audio up to `ms` has been streamed: slices it has passed are settled. */
  used(ms: number): void {
    if (ms <= this.usedMs) return;
    this.usedMs = ms;
    while (this.open.length > 1 && (this.open[0] as Slice).toMs <= ms) {
      const slice = this.open.shift() as Slice;
      this.queue(() => this.settle(slice, slice.toMs - slice.fromMs));
    }
  }

  /**
   * The stream is over, `totalMs` long: each open slice is settled for its share (the last one for anything past the
   * held audio too: an overrun the ledger records) or released when no audio reached it.
   */
  async finish(totalMs: number, reason: 'failed' | 'cancelled' = 'cancelled'): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    await this.extending;
    this.used(Math.max(totalMs, this.usedMs));
    const total = this.usedMs;
    const shares = this.open.map((slice, index) => {
      const last = index === this.open.length - 1;
      return Math.max(0, last ? total - slice.fromMs : Math.min(total, slice.toMs) - slice.fromMs);
    });
    // The stream's record goes with the last settlement, in the same append, carrying every slice's charge.
    const closing = shares.findLastIndex((share) => share > 0);
    // Slices no audio reached are released together: a coded stream may hold many ahead of what it used.
    const releases: Promise<void>[] = [];
    for (const [index, slice] of this.open.entries()) {
      const share = shares[index] as number;
      if (share > 0) this.queue(() => this.settle(slice, share, index === closing));
      else releases.push(this.release(slice, reason));
    }
    this.open.length = 0;
    await Promise.all([this.settling, ...releases]);
    // No audio reached an open slice: the record goes alone, with what earlier slices were charged.
    const record = this.options.requestLog?.finish({
      status: 200,
      costNanos: this.chargedNanos,
      holdId: null,
      ...(this.credential !== undefined && { credential: this.credential }),
    });
    if (record) {
      await this.options.spending.logRequest(record).catch((error: unknown) => {
        this.options.log(error, 'realtime: logging the stream failed');
      });
    }
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

  private extend(): Promise<void> {
    if (this.refusal !== undefined || this.finished) return Promise.resolve();
    this.extending ??= this.reserveSlice()
      .catch((error: unknown) => {
        this.refusal =
          error instanceof RequestRefused
            ? error
            : new RequestRefused(
                'unavailable',
                'The gateway could not hold funds for more audio; the stream ends here',
              );
        if (!(error instanceof RequestRefused)) this.options.log(error, 'realtime: reserving a slice failed');
      })
      .finally(() => {
        this.extending = undefined;
      });
    return this.extending;
  }

  private async reserveSlice(): Promise<void> {
    const {
      spending,
      auth,
      requestId,
      tag,
      unitPrice,
      maxSliceSeconds = SLICE_SECONDS,
      ttlMs,
    } = this.options;
    // A slice covers as much as every slice before it, from a minute up to the most one may: a short stream holds
    // little, and a long one (or coded audio's worst case) needs few holds.
    const sliceSeconds = Math.min(
      maxSliceSeconds,
      Math.max(SLICE_SECONDS, Math.floor(this.coveredMs / 1000)),
    );
    const hold = await reserve(
      spending,
      { auth, requestId, tag },
      {
        minNanos: costOfSeconds(MIN_SLICE_SECONDS, unitPrice, this.discount),
        maxNanos: costOfSeconds(sliceSeconds, unitPrice, this.discount),
        ...(ttlMs !== undefined && { ttlMs }),
      },
      this.options.model.id,
    );
    // Slices are whole seconds, so the seconds billed per slice add up to the stream's seconds.
    const ms = secondsCoveredBy(hold.grantedNanos, unitPrice, sliceSeconds, this.discount) * 1000;
    if (this.finished) {
      await release(spending, hold, 'cancelled');
      return;
    }
    this.open.push({ hold, fromMs: this.coveredMs, toMs: this.coveredMs + ms });
    this.coveredMs += ms;
  }

  /** Settles a slice for its audio: whole seconds, a started second counting as one. */
  private async settle(slice: Slice, ms: number, closing = false): Promise<void> {
    const { spending, model, unitPrice, usageReported, requestLog } = this.options;
    const credential = this.credential;
    const seconds = Math.ceil(ms / 1000);
    const charge = priceCharge([audioLine(seconds, unitPrice)], this.discount);
    const hold = closing && requestLog ? { ...slice.hold, log: requestLog } : slice.hold;
    // What the stream was charged so far is in its requester's money (a sub-account's price), as each settle says.
    const charged = await settle(
      spending,
      hold,
      model,
      { charge, usageReported, units: seconds, ...(credential !== undefined && { credential }) },
      closing ? this.chargedNanos + charge.chargedNanos : undefined,
    );
    this.chargedNanos += charged;
    if (credential !== undefined) this.options.onSettled?.(charge, seconds, credential);
  }

  private release(slice: Slice, reason: 'failed' | 'cancelled'): Promise<void> {
    return release(this.options.spending, slice.hold, reason).catch((error: unknown) => {
      this.options.log(error, 'realtime: releasing a slice failed');
    });
  }

  private queue(work: () => Promise<void>): void {
    this.settling = this.settling.then(work).catch((error: unknown) => {
      this.options.log(error, 'realtime: settling a slice failed');
    });
  }
}
