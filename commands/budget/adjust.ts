import type { BudgetEvent } from '../../events/budget.ts';
import { NANOS_PER_CENT } from '../../events/money.ts';
import { DomainError } from '../errors.ts';
import type { BudgetState } from './state.ts';

/**
 * The operator's credit (positive) or debit (negative) of the account's balance. It is decided here, in the budget
 * stream, because only this stream knows at one revision what open holds and spend leases need: a debit decided
 * anywhere else could take the room a request was granted a moment before, on any instance.
 */
export interface AdjustCommand {
  type: 'Adjust';
  reference: string;
  amountNanos: bigint;
  reason: string;
  /** The top-up a debit gives back: its reference and what is left of it after the processor's refunds. */
  reverses?: { reference: string; remainingNanos: bigint };
  /** The account's top-ups less refunds, read from its stream: they only grow, so an old figure refuses more. */
  toppedUpNanos: bigint;
}

/** The most a balance can show (whole cents as a JSON number), as for top-ups. */
const MAX_CREDITS_NANOS = BigInt(Number.MAX_SAFE_INTEGER) * NANOS_PER_CENT;

export function decideAdjust(command: AdjustCommand, state: BudgetState): BudgetEvent[] {
  const recorded = state.adjustments.get(command.reference);
  if (recorded) {
    // A reference is recorded once for good: the same adjustment again changes nothing.
    if (recorded.amountNanos === command.amountNanos && recorded.reverses === command.reverses?.reference)
      return [];
    throw new DomainError(
      'conflict',
      `'reference': adjustment ${command.reference} was already recorded with another amount (${usd(recorded.amountNanos)})`,
      'reference',
    );
  }
  if (command.amountNanos === 0n) throw new DomainError('invalid', "'cents': must not be 0", 'cents');
  if (command.reverses) checkReversal(command, command.reverses, state);
  const balance = command.toppedUpNanos + state.adjustedNanos - state.lifetimeChargedNanos;
  const after = balance + command.amountNanos;
  if (command.amountNanos < 0n) {
    const held = state.pending.total;
    if (after < held) {
      const most = balance - held > 0n ? balance - held : 0n;
      const below = held > 0n ? `below the ${usd(held)} held by requests in progress` : 'below zero';
      throw new DomainError(
        'conflict',
        `'cents': a debit of ${usd(-command.amountNanos)} would leave the balance at ${usd(after)}, ${below}; at most ${usd(most)} can be debited now`,
        'cents',
      );
    }
  } else if (command.toppedUpNanos + state.adjustedNanos + command.amountNanos > MAX_CREDITS_NANOS) {
    throw new DomainError(
      'invalid',
      `'cents': the account's credits would total more than ${MAX_CREDITS_NANOS / NANOS_PER_CENT} cents, the most a balance can show`,
      'cents',
    );
  }
  return [
    {
      type: 'BalanceAdjusted',
      data: {
        accountId: state.accountId,
        month: state.month,
        reference: command.reference,
        amountNanos: command.amountNanos.toString(),
        reason: command.reason,
        ...(command.reverses && { reverses: command.reverses.reference }),
      },
    },
  ];
}

function checkReversal(
  command: AdjustCommand,
  reverses: NonNullable<AdjustCommand['reverses']>,
  state: BudgetState,
): void {
  if (command.amountNanos > 0n)
    throw new DomainError('invalid', "'cents': a reversal of a top-up is a debit (negative cents)", 'cents');
  for (const [reference, earlier] of state.adjustments) {
    if (earlier.reverses === reverses.reference)
      throw new DomainError(
        'conflict',
        `'reverses': top-up ${reverses.reference} was already reversed by adjustment ${reference}`,
        'reverses',
      );
  }
  if (-command.amountNanos > reverses.remainingNanos)
    throw new DomainError(
      'invalid',
      `'cents': the reversal of top-up ${reverses.reference} can be at most ${usd(reverses.remainingNanos)}, the top-up less its refunds`,
      'cents',
    );
}

/** Dollars for a message: two decimals for whole cents, else as many as the nano-dollars need. */
function usd(nanos: bigint): string {
  const sign = nanos < 0n ? '-' : '';
  const abs = nanos < 0n ? -nanos : nanos;
  const fraction = (abs % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '').padEnd(2, '0');
  return `${sign}$${abs / 1_000_000_000n}.${fraction}`;
}
