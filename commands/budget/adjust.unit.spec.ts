import { describe, expect, it } from 'vitest';
import type { BudgetEvent } from '../../events/budget.ts';
import { DomainError } from '../errors.ts';
import type { AdjustCommand } from './adjust.ts';
import { binding, type Carried, decide, type Limits } from './decide.ts';
import { type BudgetState, evolve, initialState } from './state.ts';

const CENT = 10_000_000n;
const month = (name: string, carried?: Carried): BudgetState => {
  const state = initialState();
  const [event] = decide(
    {
      type: 'OpenMonth',
      accountId: 'a',
      month: name,
      carried: carried ?? { lifetimeChargedNanos: 0n, subAccountChargedNanos: new Map(), openHolds: [] },
    },
    state,
  );
  return evolve(state, event as BudgetEvent);
};
const given = (state: BudgetState, events: BudgetEvent[]) => events.reduce(evolve, state);
const adjust = (over: Partial<AdjustCommand> & { cents: number }): AdjustCommand => ({
  type: 'Adjust',
  reference: 'adj-1',
  amountNanos: BigInt(over.cents) * CENT,
  reason: 'goodwill',
  toppedUpNanos: 100n * CENT,
  ...over,
});
const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error as DomainError;
  }
  throw new Error('not refused');
};
const limits: Limits = {
  toppedUpNanos: 100n * CENT,
  balanceLowThresholdNanos: 0n,
  subAccount: null,
  tag: null,
};

describe('adjustments in the budget stream', () => {
  it('credits and debits the balance the caps are decided against, once per reference', () => {
    let state = month('2026-03');
    state = given(state, decide(adjust({ cents: 50 }), state));
    expect(binding(state, limits).remainingNanos).toBe(150n * CENT);
    const debit = decide(adjust({ cents: -120, reference: 'adj-2' }), state);
    expect(debit).toEqual([
      {
        type: 'BalanceAdjusted',
        data: {
          accountId: 'a',
          month: '2026-03',
          reference: 'adj-2',
          amountNanos: String(-120n * CENT),
          reason: 'goodwill',
        },
      },
    ]);
    state = given(state, debit);
    expect(binding(state, limits).remainingNanos).toBe(30n * CENT);
    expect(decide(adjust({ cents: 50 }), state)).toEqual([]);
    const reused = refusal(() => decide(adjust({ cents: 51 }), state));
    expect([reused.kind, reused.field]).toEqual(['conflict', 'reference']);
  });

  it('never debits below what open holds need, nor below zero', () => {
    let state = month('2026-03');
    state = given(state, [
      {
        type: 'SpendReserved',
        data: {
          accountId: 'a',
          month: '2026-03',
          holdId: 'h',
          requestId: 'r',
          amountNanos: String(60n * CENT),
          subAccountId: null,
          tag: null,
          expiresAt: '2026-03-10T00:15:00.000Z',
        },
      },
    ]);
    const held = refusal(() => decide(adjust({ cents: -41 }), state));
    expect(held).toBeInstanceOf(DomainError);
    expect([held.kind, held.field]).toEqual(['conflict', 'cents']);
    expect(held.message).toContain(
      'below the $0.60 held by requests in progress; at most $0.40 can be debited now',
    );
    expect(decide(adjust({ cents: -40 }), state)).toHaveLength(1);
    state = given(state, [
      {
        type: 'SpendReleased',
        data: {
          accountId: 'a',
          month: '2026-03',
          holdId: 'h',
          amountNanos: String(60n * CENT),
          reason: 'failed',
        },
      },
    ]);
    expect(refusal(() => decide(adjust({ cents: -101 }), state)).message).toContain('below zero');
  });

  it('reverses a top-up once, for at most what is left of it', () => {
    let state = month('2026-03');
    const reverses = { reference: 'pay-1', remainingNanos: 30n * CENT };
    expect(refusal(() => decide(adjust({ cents: 30, reverses }), state)).field).toBe('cents');
    expect(refusal(() => decide(adjust({ cents: -31, reverses }), state)).message).toContain('at most $0.30');
    state = given(state, decide(adjust({ cents: -30, reverses }), state));
    const again = refusal(() => decide(adjust({ cents: -1, reference: 'adj-2', reverses }), state));
    expect([again.kind, again.field]).toEqual(['conflict', 'reverses']);
  });

  it('carries every adjustment into the next month, so a reference counts once for good', () => {
    let march = month('2026-03');
    march = given(
      march,
      decide(adjust({ cents: -5, reverses: { reference: 'pay-1', remainingNanos: 5n * CENT } }), march),
    );
    const [closed] = decide({ type: 'CloseMonth' }, march);
    expect(closed?.data).toMatchObject({
      adjustedNanos: String(-5n * CENT),
      adjustments: { 'adj-1': { amountNanos: String(-5n * CENT), reason: 'goodwill', reverses: 'pay-1' } },
    });
    march = given(march, [closed as BudgetEvent]);
    const april = month('2026-04', {
      lifetimeChargedNanos: march.lifetimeChargedNanos,
      subAccountChargedNanos: march.subAccountCharged,
      openHolds: [],
      adjustedNanos: march.adjustedNanos,
      adjustments: march.adjustments,
    });
    expect(april.adjustedNanos).toBe(-5n * CENT);
    expect(
      decide(adjust({ cents: -5, reverses: { reference: 'pay-1', remainingNanos: 5n * CENT } }), april),
    ).toEqual([]);
    // A month without adjustments carries nothing of them: its events read as before.
    const [plain] = decide({ type: 'CloseMonth' }, month('2026-03'));
    expect(plain?.data).not.toHaveProperty('adjustments');
  });
});
