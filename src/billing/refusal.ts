import type { Headroom, Limits } from '../../commands/budget/decide.ts';
import { customerPrice } from '../../commands/budget/markup.ts';
import { RequestRefused } from '../contracts/errors.ts';
import { nanosToCents } from '../contracts/money.ts';

/**
 * A hold refused for want of room under a cap, with the room the tightest scope had left (in the account's money,
 * as holds are sized): a caller that sized the hold (chat's output limit) can say what would have fitted.
 */
export class HoldRefused extends RequestRefused {
  constructor(
    override readonly kind: 'insufficient_balance' | 'budget_exceeded',
    message: string,
    readonly availableNanos: bigint,
  ) {
    super(kind, message);
  }
}

const dollars = (nanos: bigint) =>
  `$${(nanosToCents(nanos) / 100).toFixed(nanos % 10_000_000n === 0n ? 2 : 6)}`;

/** The period a renewing cap was reached in, as a refusal names it. */
function periodText(period: NonNullable<Headroom['period']>): string {
  switch (period.reset) {
    case 'daily':
      return ` for the day ${period.start} (UTC)`;
    case 'weekly':
      return ` for the week from Monday ${period.start} (UTC)`;
    case 'monthly':
      return ` for ${period.start.slice(0, 7)}`;
    default: {
      const _exhaustive: never = period.reset;
      return _exhaustive;
    }
  }
}

/**
 * The 402 of the tightest scope, its figures in its own money: a sub-account's cap, spending and the request's need
 * in its price (its customer never sees what its account pays).
 */
export function refusal(tightest: Headroom, neededNanos: bigint, limits: Limits): HoldRefused {
  const availableNanos = tightest.remainingNanos > 0n ? tightest.remainingNanos : 0n;
  const markup = tightest.markupBasisPoints ?? 0;
  const needed = customerPrice(neededNanos > 0n ? neededNanos : 1n, markup);
  const need = `this request needs up to ${dollars(needed)}`;
  const held =
    tightest.heldNanos > 0n ? ` (and ${dollars(tightest.heldNanos)} held by requests in progress)` : '';
  switch (tightest.scope) {
    case 'account':
      return new HoldRefused(
        'insufficient_balance',
        `Insufficient balance: ${dollars(availableNanos)} available, ${need}. Top up to continue.`,
        availableNanos,
      );
    case 'sub_account': {
      const period = tightest.period;
      const renews = period ? ` The cap renews at ${period.endsAt.replace('.000Z', 'Z')}.` : '';
      return new HoldRefused(
        'budget_exceeded',
        `Spend cap of sub-account ${limits.subAccount?.id} reached${period ? periodText(period) : ''}: cap ${dollars(tightest.capNanos)}, spent ${dollars(tightest.spentNanos)}${held}; ${need}.${renews}`,
        availableNanos,
      );
    }
    case 'tag':
      return new HoldRefused(
        'budget_exceeded',
        `Monthly budget of tag '${limits.tag?.name}' reached: cap ${dollars(tightest.capNanos)}, spent ${dollars(tightest.spentNanos)}${held}; ${need}.`,
        availableNanos,
      );
    default: {
      const _exhaustive: never = tightest.scope;
      return _exhaustive;
    }
  }
}
