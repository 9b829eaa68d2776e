import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { atBatchRates } from '../../src/batches/hold-line.ts';
import { BatchSettingsError, batchSettings } from '../../src/batches/settings.ts';
import type { CatalogModel } from '../../src/catalog/types.ts';
import { readConfigFile } from '../../src/config-file.ts';
import { priceCharge } from '../../src/contracts/money.ts';

const lines = [
  { item: 'input_tokens', quantity: 1_000, unitPriceNanosPerMillion: 150_000_000n },
  { item: 'output_tokens', quantity: 500, unitPriceNanosPerMillion: 600_000_000n },
];

describe('batch charges', () => {
  it('batch_api: the lines are at the batch rates already; the fee is added and nothing taken off', () => {
    // 150,000 + 300,000 = 450,000 pass-through; fee 22,500.
    expect(priceCharge(lines, 'batch_api')).toMatchObject({
      passThroughNanos: 450_000n,
      feeNanos: 22_500n,
      discountNanos: 0n,
      chargedNanos: 472_500n,
    });
  });

  it('batch_fee: half the normal charge would be below the provider cost, so the fee is waived and no more', () => {
    // Normal 472,500; half 236,250 < pass-through 450,000: charged the pass-through, the fee is the discount.
    expect(priceCharge(lines, 'batch_fee')).toMatchObject({
      passThroughNanos: 450_000n,
      feeNanos: 22_500n,
      discountNanos: 22_500n,
      chargedNanos: 450_000n,
    });
  });

  it('halves each per-token rate for the batch rates, rounding up, and keeps what has no price', () => {
    const model = {
      prices: {
        inputNanosPerMillion: 150_000_001n,
        outputNanosPerMillion: 600_000_000n,
        cachedInputNanosPerMillion: 75_000_000n,
        cacheWriteNanosPerMillion: null,
      },
    } as CatalogModel;
    expect(atBatchRates(model).prices).toEqual({
      inputNanosPerMillion: 75_000_001n,
      outputNanosPerMillion: 300_000_000n,
      cachedInputNanosPerMillion: 37_500_000n,
      cacheWriteNanosPerMillion: null,
    });
  });
});

describe('batch settings', () => {
  it('defaults to every batch API spoken, full price for the rest, a 30 s poll', () => {
    const settings = batchSettings({});
    expect([...settings.apis].sort()).toEqual(['anthropic', 'google', 'openai']);
    expect(settings).toMatchObject({ fallback: 'full_price', pollMs: 30_000 });
  });

  it('reads a list, none, refuse and a poll interval', () => {
    expect([...batchSettings({ GATEWAY_BATCH_APIS: 'openai, google' }).apis]).toEqual(['openai', 'google']);
    expect(batchSettings({ GATEWAY_BATCH_APIS: 'none' }).apis.size).toBe(0);
    expect(batchSettings({ GATEWAY_BATCH_FALLBACK: 'refuse', GATEWAY_BATCH_POLL_MS: '500' })).toMatchObject({
      fallback: 'refuse',
      pollMs: 500,
    });
  });

  it('refuses to start on a provider it has no batch client for, or an unknown fallback', () => {
    expect(() => batchSettings({ GATEWAY_BATCH_APIS: 'openai,groq' })).toThrow(BatchSettingsError);
    expect(() => batchSettings({ GATEWAY_BATCH_APIS: 'openai,groq' })).toThrow(/groq/);
    expect(() => batchSettings({ GATEWAY_BATCH_FALLBACK: 'half' })).toThrow(/full_price or refuse/);
  });
});

describe('batch settings from the config file', () => {
  it('become the variables, which the environment overrides', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-batch-config-'));
    try {
      const path = join(dir, 'config.json');
      await writeFile(path, JSON.stringify({ batches: { apis: [], fallback: 'refuse' } }));
      expect(readConfigFile(path).variables).toMatchObject({
        GATEWAY_BATCH_APIS: 'none',
        GATEWAY_BATCH_FALLBACK: 'refuse',
      });
      await writeFile(path, JSON.stringify({ batches: { fallback: 'half' } }));
      expect(() => readConfigFile(path)).toThrow(/batches\.fallback/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
