import { describe, expect, it } from 'vitest';
import { canonicalJson, chainHash, GENESIS_HASH } from '../../events/envelope.ts';
import { deterministicEventId, parseEvent } from '../../events/index.ts';
import { toBalance } from '../../src/billing/balance.ts';

describe('canonical JSON and the hash chain', () => {
  it('orders keys at every depth and drops undefined', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: null }], c: undefined } })).toBe(
      '{"a":{"d":[2,{"y":null,"z":1}]},"b":1}',
    );
  });

  it('hashes equal events alike, whatever their key order, and differently when anything changes', () => {
    const base = {
      id: '00000000-0000-4000-8000-000000000000',
      type: 'T',
      stream: 's-1',
      revision: 0,
      occurredAt: new Date('2026-01-01T00:00:00Z'),
      data: { a: 1, b: 2 },
      metadata: { schemaVersion: 1 },
    };
    const hash = chainHash(GENESIS_HASH, base);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(chainHash(GENESIS_HASH, { ...base, data: { b: 2, a: 1 } })).toBe(hash);
    expect(chainHash(GENESIS_HASH, { ...base, data: { a: 1, b: 3 } })).not.toBe(hash);
    expect(chainHash(hash, base)).not.toBe(hash);
  });
});

describe('event ids and parsing', () => {
  it('derives the same UUID from the same name', () => {
    const id = deterministicEventId('account-1/topup/ch_1');
    expect(id).toBe(deterministicEventId('account-1/topup/ch_1'));
    expect(id).not.toBe(deterministicEventId('account-1/topup/ch_2'));
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('validates event data against its schema', () => {
    const metadata = { schemaVersion: 1 };
    expect(
      parseEvent({
        type: 'AccountToppedUp',
        data: { accountId: 'a', reference: 'r', amountNanos: '5' },
        metadata,
      }).ok,
    ).toBe(true);
    const float = parseEvent({
      type: 'AccountToppedUp',
      data: { accountId: 'a', reference: 'r', amountNanos: '1.5' },
      metadata,
    });
    expect(float).toMatchObject({ ok: false, error: expect.stringContaining('amountNanos') });
    expect(parseEvent({ type: 'Nope', data: {}, metadata })).toMatchObject({ ok: false });
  });
});

describe('balance in cents', () => {
  it('never rounds a balance up', () => {
    expect(toBalance(12_349_999_999n)).toEqual({ cents: 1234, usd: 12.34 });
    expect(toBalance(0n)).toEqual({ cents: 0, usd: 0 });
    expect(toBalance(-1n)).toEqual({ cents: -1, usd: -0.01 });
  });
});
