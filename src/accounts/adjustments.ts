import { type AccountState, evolve, initialState } from '../../commands/account/state.ts';
import type { BudgetLedger } from '../../commands/budget/handler.ts';
import { DomainError } from '../../commands/errors.ts';
import { type AccountEvent, accountStream } from '../../events/account.ts';
import { monthOf } from '../../events/budget.ts';
import { parseAs } from '../../events/index.ts';
import { NANOS_PER_CENT } from '../../events/money.ts';
import type { EventStore } from '../../events/store.ts';

export interface AdjustmentInput {
  /** Signed whole cents: a credit is positive, a debit negative. */
  cents: number;
  reason: string;
  reference: string;
  /** The reference of the top-up a debit reverses. */
  reverses?: string;
}

export interface AdjustmentResult {
  object: 'adjustment';
  account_id: string;
  reference: string;
  cents: number;
  reason: string;
  reverses: string | null;
  /** False when the reference was already recorded: the answer is that first adjustment's, and nothing changed. */
  applied: boolean;
}

export const ADJUSTMENT_REASON_MAX = 500;
export const ADJUSTMENT_REFERENCE_MAX = 200;

/**
 * The operator's credits and debits of an account's balance. The top-ups they count against are read from the
 * account's stream; the adjustment itself is decided in the account's budget stream (commands/budget/adjust.ts),
 * which knows at one revision what open holds and leases need, so that a debit can never take money a request was
 * granted, on any instance.
 */
export class Adjustments {
  constructor(
    private readonly store: EventStore,
    private readonly ledger: BudgetLedger,
    private readonly afterWrite: (checkpoint: string) => Promise<void>,
  ) {}

  async adjust(accountId: string, input: AdjustmentInput): Promise<AdjustmentResult> {
    const { cents } = input;
    if (!Number.isSafeInteger(cents) || cents === 0)
      throw new DomainError('invalid', "'cents': a non-zero integer (negative for a debit)", 'cents');
    const reason = text(input.reason, 'reason', ADJUSTMENT_REASON_MAX);
    const reference = text(input.reference, 'reference', ADJUSTMENT_REFERENCE_MAX);
    const reversed = input.reverses === undefined ? undefined : text(input.reverses, 'reverses', 200);
    const account = await readAccount(this.store, accountId);
    if (!account) throw new DomainError('not_found', 'account not found', 'account');
    let reverses: { reference: string; remainingNanos: bigint } | undefined;
    if (reversed !== undefined) {
      const topUp = account.state.topUps.get(reversed);
      if (topUp === undefined)
        throw new DomainError('not_found', `'reverses': no top-up with reference ${reversed}`, 'reverses');
      reverses = {
        reference: reversed,
        remainingNanos: topUp - (account.state.reversed.get(reversed) ?? 0n),
      };
    }
    const decision = await this.ledger.submit(accountId, monthOf(account.openedAt), {
      type: 'Adjust',
      reference,
      amountNanos: BigInt(cents) * NANOS_PER_CENT,
      reason,
      ...(reverses && { reverses }),
      toppedUpNanos: account.state.toppedUpNanos,
    });
    if (decision.checkpoint) await this.afterWrite(decision.checkpoint);
    const recorded = decision.state.adjustments.get(reference);
    if (!recorded) throw new Error(`adjustment ${reference} was decided but is not in the budget stream`);
    return {
      object: 'adjustment',
      account_id: accountId,
      reference,
      cents: Number(recorded.amountNanos / NANOS_PER_CENT),
      reason: recorded.reason,
      reverses: recorded.reverses ?? null,
      applied: decision.events.length > 0,
    };
  }
}

function text(value: string, field: string, max: number): string {
  const trimmed = value.trim();
  if (trimmed === '' || trimmed.length > max)
    throw new DomainError('invalid', `'${field}': 1 to ${max} characters`, field);
  return trimmed;
}

/** The account's own stream folded (its keys, top-ups and refunds: a short stream), with when it was opened. */
async function readAccount(
  store: EventStore,
  accountId: string,
): Promise<{ state: AccountState; openedAt: Date } | undefined> {
  let state = initialState();
  let openedAt: Date | undefined;
  for (let from = 0; ; ) {
    const page = await store.readStream(accountStream(accountId), { fromRevision: from, maxCount: 1000 });
    for (const stored of page) {
      const event = parseAs<AccountEvent>(stored);
      if (!event) continue;
      if (event.type === 'AccountOpened') openedAt = stored.occurredAt;
      state = evolve(state, event);
    }
    const last = page.at(-1);
    if (!last || page.length < 1000) break;
    from = last.revision + 1;
  }
  return state.exists && openedAt ? { state, openedAt } : undefined;
}
