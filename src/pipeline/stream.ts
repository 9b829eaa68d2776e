import type { CatalogModel } from '../catalog/types.ts';
import { Assembled } from './assembled.ts';
import { type Candidate, type Reserved, type Served, settleServed } from './call.ts';
import { clientError } from './retries.ts';
import type { Bill, Outcome, PipelineDeps } from './types.ts';

/** Reads a stream's items as they pass, and bills what passed once it is over. */
export interface StreamMeter<I> {
  observe(item: I): void;
  bill(): Promise<Bill>;
}

/** How a stream ended: settled (its outcome), or with a failure the client is to be told of instead of success. */
export interface Settlement {
  outcome?: Outcome;
  /** The upstream's failure mid-stream (as the client sees it), else a settlement that could not be made durable. */
  failure?: unknown;
  /** A settlement that failed, for the log: the hold stays and expires, and the audit reports it. */
  unsettled?: { error: unknown; holdId: string };
}

/** An opened stream: its first item has arrived (so a failing model could still fall back), the rest follow. */
export interface Opened<I> {
  first: I;
  rest: AsyncIterator<I>;
}

/**
 * A served stream whose completion settles: iterate it to relay the items; when the iteration ends (the provider
 * finished, failed, or the consumer stopped because the client went away) the hold is settled for what passed,
 * and `settled()` tells how it ended. An item counts as passed once the consumer asks for the next one, so an item
 * the consumer dropped (its client gone) is not billed as produced.
 */
export class MeteredStream<I, R extends Reserved = Reserved> implements AsyncIterable<I> {
  readonly model: CatalogModel;
  readonly latencyMs: number;
  /** What was held for the call (the chat path's counted input, among others). */
  readonly reserved: R;
  private readonly done: Promise<Settlement>;
  private finish!: (settlement: Settlement) => void;

  constructor(
    private readonly deps: Pick<PipelineDeps, 'spending'>,
    private readonly served: Served<Candidate, R, Opened<I>>,
    private readonly meter: StreamMeter<I>,
  ) {
    this.model = served.candidate.model;
    this.latencyMs = served.latencyMs;
    this.reserved = served.reserved;
    this.done = new Promise((resolve) => {
      this.finish = resolve;
    });
  }

  [Symbol.asyncIterator](): AsyncIterator<I> {
    return this.run();
  }

  /** Resolves once the stream has been settled (or its settlement has failed). */
  settled(): Promise<Settlement> {
    return this.done;
  }

  private async *run(): AsyncGenerator<I> {
    const { first, rest } = this.served.result;
    let failure: unknown;
    let exhausted = false;
    const log = this.served.reserved.hold.log;
    const assembled = log ? new Assembled() : undefined;
    if (log) log.stream = true;
    try {
      log?.firstByte();
      yield first;
      this.meter.observe(first);
      assembled?.add(first);
      for (let next = await rest.next(); !next.done; next = await rest.next()) {
        yield next.value;
        this.meter.observe(next.value);
        assembled?.add(next.value);
      }
      exhausted = true;
    } catch (error) {
      exhausted = true;
      failure = clientError(error, this.model.id);
    } finally {
      if (!exhausted) await rest.return?.();
      if (assembled) log?.respond(assembled.completion());
      this.finish(await this.settle(failure));
    }
  }

  private async settle(failure: unknown): Promise<Settlement> {
    try {
      const outcome = await settleServed(this.deps, this.served, await this.meter.bill());
      return failure === undefined ? { outcome } : { outcome, failure };
    } catch (error) {
      // An answer whose charge is not durable does not end as a success (the database was away for too long).
      const unsettled = { error, holdId: this.served.reserved.hold.holdId };
      return { failure: failure ?? error, unsettled };
    }
  }
}
