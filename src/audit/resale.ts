import { customerPrice } from '../../commands/budget/markup.ts';
import type { BudgetEvent } from '../../events/budget.ts';
import type { StoredEvent } from '../../events/envelope.ts';
import type { GatewayEvent } from '../../events/index.ts';
import { matchesModel } from '../accounts/reseller-settings.ts';
import { usd } from './decimal.ts';
import { Findings, where } from './findings.ts';

/** A sub-account's price book as one event of its stream left it. */
interface PriceBook {
  revision: number;
  position: bigint;
  at: Date;
  markup: number;
  overrides: { model: string; markupBasisPoints: number }[];
}

interface SettledPrice {
  charged: bigint;
  price: bigint;
  markup: number;
}

/** How long after a price book is replaced a hold may still be priced by it (an instance's live state lagging). */
const STALE_MS = 60_000;

type Settled = Extract<BudgetEvent, { type: 'SpendSettled' }>['data'];
type Overrun = Extract<BudgetEvent, { type: 'SpendOverrun' }>['data'];
type Reserved = Extract<BudgetEvent, { type: 'SpendReserved' }>['data'];

/**
 * A sub-account's charges re-priced from its price book (docs/billing.md, Reselling), from the log alone: every
 * sub-account's hold and charge names the price book it was priced at (the sub-account stream's revision) and its
 * markup, which must be that price book's for the charge's model (its first matching override, else its own
 * markup), recorded before the hold; its price must be ⌈cost × (1 + markup)⌉ (an overrun: the price of the whole
 * less the settle's) and its margin exactly price − cost.
 */
export class ResaleCheck {
  readonly findings = new Findings();
  private readonly books = new Map<string, PriceBook[]>();
  /** Each sub-account hold's price book as it recorded it, and each settle's price, by `account/hold`. */
  private readonly holds = new Map<string, { markup?: number; revision?: number }>();
  private readonly settled = new Map<string, SettledPrice>();
  priced = 0;

  apply(stored: StoredEvent, event: GatewayEvent): void {
    switch (event.type) {
      case 'SubAccountCreated':
        this.books.set(event.data.subAccountId, [
          {
            revision: stored.revision,
            position: stored.position,
            at: stored.occurredAt,
            markup: event.data.markupBasisPoints ?? 0,
            overrides: event.data.priceOverrides ?? [],
          },
        ]);
        return;
      case 'SubAccountUpdated': {
        const { markupBasisPoints, priceOverrides } = event.data;
        const history = this.books.get(event.data.subAccountId);
        const last = history?.at(-1);
        if (!history || !last || (markupBasisPoints === undefined && priceOverrides === undefined)) return;
        history.push({
          revision: stored.revision,
          position: stored.position,
          at: stored.occurredAt,
          markup: markupBasisPoints ?? last.markup,
          overrides: priceOverrides ?? last.overrides,
        });
        return;
      }
      case 'BudgetMonthOpened':
        for (const hold of event.data.openHolds) this.noteHold(event.data.accountId, hold);
        return;
      case 'SpendReserved':
        this.reserved(stored, event.data);
        return;
      case 'SpendSettled':
        if (event.data.subAccountId !== null) this.charge(stored, event.data, event.data.subAccountId);
        return;
      case 'SpendOverrun':
        if (event.data.subAccountId !== null) this.overrun(stored, event.data);
        return;
      default:
        return;
    }
  }

  private noteHold(
    accountId: string,
    hold: { holdId: string; markupBasisPoints?: number; priceBookRevision?: number },
  ) {
    const key = `${accountId}/${hold.holdId}`;
    if (this.holds.has(key)) return;
    this.holds.set(key, {
      ...(hold.markupBasisPoints !== undefined && { markup: hold.markupBasisPoints }),
      ...(hold.priceBookRevision !== undefined && { revision: hold.priceBookRevision }),
    });
  }

  /** A hold's price is its amount at its markup, and its markup one its price book has. */
  private reserved(stored: StoredEvent, data: Reserved): void {
    this.noteHold(data.accountId, data);
    if (data.subAccountId === null || data.priceNanos === undefined) return;
    const at = where(stored);
    const markup = data.markupBasisPoints;
    if (markup === undefined) {
      this.findings.fail(`${at}: hold ${data.holdId} records a price and no price book`);
      return;
    }
    const expected = customerPrice(BigInt(data.amountNanos), markup);
    if (BigInt(data.priceNanos) !== expected)
      this.findings.fail(
        `${at}: hold ${data.holdId} of ${usd(BigInt(data.amountNanos))} is priced ${usd(BigInt(data.priceNanos))}; at ${markup / 100}% it is ${usd(expected)}`,
      );
    const book = this.bookAt(stored, data.subAccountId, data.priceBookRevision, `hold ${data.holdId}`);
    if (!book) return;
    if (markup !== book.markup && !book.overrides.some((o) => o.markupBasisPoints === markup))
      this.findings.fail(
        `${at}: hold ${data.holdId} is priced at ${markup / 100}%, which price book ${data.priceBookRevision} of sub-account ${data.subAccountId} does not have`,
      );
    // Instances follow the log within about a second: a price book replaced long before is a stale instance's.
    const newer = this.books.get(data.subAccountId)?.find((b) => b.revision > book.revision);
    if (
      newer &&
      newer.position < stored.position &&
      stored.occurredAt.getTime() - newer.at.getTime() > STALE_MS
    )
      this.findings.warn(
        `${at}: hold ${data.holdId} is priced by price book ${book.revision} of sub-account ${data.subAccountId}, replaced ${Math.round((stored.occurredAt.getTime() - newer.at.getTime()) / 1000)} s before`,
      );
  }

  private charge(stored: StoredEvent, data: Settled, subAccountId: string): void {
    const at = where(stored);
    const cost = BigInt(data.chargedNanos);
    const markup = data.markupBasisPoints;
    if (data.priceNanos === undefined || markup === undefined) {
      // Charges before price books (or of a hold that recorded none) are at cost: no margin.
      if (data.marginNanos !== undefined && data.marginNanos !== '0')
        this.findings.fail(`${at}: charge of hold ${data.holdId} records a margin and no price`);
      return;
    }
    this.priced += 1;
    const hold = this.holds.get(`${data.accountId}/${data.holdId}`);
    if (hold?.markup !== undefined && hold.markup !== markup)
      this.findings.fail(
        `${at}: hold ${data.holdId} was held at ${hold.markup / 100}% and charged at ${markup / 100}%: a settle keeps its hold's price book`,
      );
    const book = this.bookAt(stored, subAccountId, data.priceBookRevision, `charge of hold ${data.holdId}`);
    if (book) {
      const expected = markupFor(book, data.charge.model);
      if (expected !== markup)
        this.findings.fail(
          `${at}: ${data.charge.model} charged at ${markup / 100}% to sub-account ${subAccountId}; its price book ${book.revision} says ${expected / 100}%`,
        );
    }
    const price = customerPrice(cost, markup);
    this.compare(at, `charge of hold ${data.holdId}`, cost, price, data.priceNanos, data.marginNanos);
    this.settled.set(`${data.accountId}/${data.holdId}`, { charged: cost, price, markup });
  }

  private overrun(stored: StoredEvent, data: Overrun): void {
    if (data.priceNanos === undefined) return;
    const at = where(stored);
    const settled = this.settled.get(`${data.accountId}/${data.holdId}`);
    if (!settled) {
      this.findings.fail(`${at}: overrun of hold ${data.holdId} is priced, but its charge was not`);
      return;
    }
    const cost = BigInt(data.overrunNanos);
    const price = customerPrice(settled.charged + cost, settled.markup) - settled.price;
    this.compare(at, `overrun of hold ${data.holdId}`, cost, price, data.priceNanos, data.marginNanos);
  }

  /** The recorded price and margin against the re-derived: price − cost = margin, to the nano-dollar. */
  private compare(
    at: string,
    what: string,
    cost: bigint,
    price: bigint,
    recordedPrice: string,
    recordedMargin: string | undefined,
  ): void {
    if (BigInt(recordedPrice) !== price)
      this.findings.fail(
        `${at}: ${what} is priced ${usd(BigInt(recordedPrice))}; its price book makes ${usd(price)}`,
      );
    const margin = recordedMargin === undefined ? undefined : BigInt(recordedMargin);
    if (margin !== BigInt(recordedPrice) - cost)
      this.findings.fail(
        `${at}: ${what} records a margin of ${margin === undefined ? 'none' : usd(margin)}; price ${usd(BigInt(recordedPrice))} − cost ${usd(cost)} = ${usd(BigInt(recordedPrice) - cost)}`,
      );
  }

  /** The price book a hold or charge names: the sub-account's as it stood at that revision, recorded before it. */
  private bookAt(stored: StoredEvent, subAccountId: string, revision: number | undefined, what: string) {
    const at = where(stored);
    const history = this.books.get(subAccountId);
    const book = history?.findLast((b) => b.revision <= (revision ?? -1));
    if (!book || revision === undefined) {
      this.findings.fail(
        `${at}: ${what} names price book ${revision ?? '(none)'} of sub-account ${subAccountId}, which the log does not hold before it`,
      );
      return undefined;
    }
    if (book.position > stored.position)
      this.findings.fail(
        `${at}: ${what} names price book ${revision} of sub-account ${subAccountId}, recorded after it`,
      );
    return book;
  }
}

/** The markup a price book gives a model: its first override whose pattern matches, else its own. */
function markupFor(book: PriceBook, model: string): number {
  return book.overrides.find((o) => matchesModel(o.model, model))?.markupBasisPoints ?? book.markup;
}
