import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/catalog/index.ts';
import { affordableOutputTokens, chatCharge, tokensOnly } from '../../src/chat/pricing.ts';
import { dollarsPerMillion, lineCost, nanosToCents, priceCharge } from '../../src/contracts/money.ts';

const catalog = buildCatalog();
const echo = catalog.get('local/echo');
const pro = catalog.get('local/echo-pro');

describe('charges', () => {
  it('reads dollar prices per million exactly', () => {
    expect(dollarsPerMillion('0.15')).toBe(150_000_000n);
    expect(dollarsPerMillion('15')).toBe(15_000_000_000n);
    expect(dollarsPerMillion('0.000000001')).toBe(1n);
    expect(() => dollarsPerMillion('1e-3')).toThrow();
  });

  it('rounds each line up to a whole nano-dollar', () => {
    // $0.15 per million tokens is 150 nano-dollars a token, exact.
    expect(lineCost({ item: 'input_tokens', quantity: 12, unitPriceNanosPerMillion: 150_000_000n })).toBe(
      1800n,
    );
    // 3 units at 1.5 nano-dollars = 4.5 → 5.
    expect(lineCost({ item: 'characters', quantity: 3, unitPriceNanosPerMillion: 1_500_000n })).toBe(5n);
    expect(lineCost({ item: 'input_tokens', quantity: 0, unitPriceNanosPerMillion: 150_000_000n })).toBe(0n);
  });

  it('adds the 5% platform fee, rounded up (worked example 1 of docs/billing.md)', () => {
    // local/echo, 12 input and 5 output tokens: 1,800 + 3,000 = 4,800 nano-dollars; fee 240; $0.00000504.
    const charge = chatCharge(echo as NonNullable<typeof echo>, tokensOnly(12, 5));
    expect(charge).toMatchObject({
      passThroughNanos: 4800n,
      feeNanos: 240n,
      discountNanos: 0n,
      chargedNanos: 5040n,
    });
    expect(nanosToCents(charge.chargedNanos)).toBe(0.000504);
    // A fee that is not whole rounds up: 21 nano-dollars → fee 1.05 → 2.
    const odd = priceCharge([{ item: 'x', quantity: 1, unitPriceNanosPerMillion: 21_000_000n }]);
    expect(odd).toMatchObject({ passThroughNanos: 21n, feeNanos: 2n, chargedNanos: 23n });
  });

  it('prices a large request exactly (worked example 2)', () => {
    // local/echo-pro, 1,000 in at $3/M = 3,000,000; 1,000 out at $15/M = 15,000,000; fee 900,000.
    const charge = chatCharge(pro as NonNullable<typeof pro>, tokensOnly(1000, 1000));
    expect(charge).toMatchObject({
      passThroughNanos: 18_000_000n,
      feeNanos: 900_000n,
      chargedNanos: 18_900_000n,
    });
    expect(nanosToCents(charge.chargedNanos)).toBe(1.89);
  });

  it('halves the charge for cache and batch, rounding the charged side up', () => {
    const lines = [{ item: 'output_tokens', quantity: 1, unitPriceNanosPerMillion: 15_000_000_000n }];
    // 15,000 + fee 750 = 15,750 → cached 7,875.
    expect(priceCharge(lines, 'cache')).toMatchObject({ chargedNanos: 7_875n, discountNanos: 7_875n });
    const odd = [{ item: 'output_tokens', quantity: 1, unitPriceNanosPerMillion: 20_000_000n }];
    // 20 + fee 1 = 21 → batch 10.5 → 11.
    expect(priceCharge(odd, 'batch')).toMatchObject({ feeNanos: 1n, chargedNanos: 11n, discountNanos: 10n });
  });

  it('finds the most output tokens a hold affords', () => {
    const model = pro as NonNullable<typeof pro>;
    const budget = chatCharge(model, tokensOnly(100, 250)).chargedNanos;
    const limit = model.maxOutputTokens ?? 0;
    expect(affordableOutputTokens(model, 100, limit, budget)).toBe(250);
    expect(affordableOutputTokens(model, 100, limit, budget - 1n)).toBe(249);
    expect(affordableOutputTokens(model, 100, limit, 0n)).toBe(0);
    expect(affordableOutputTokens(model, 100, limit, 10n ** 15n)).toBe(limit);
  });
});
