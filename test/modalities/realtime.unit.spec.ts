import { describe, expect, it } from 'vitest';
import type { CatalogModel } from '../../src/catalog/types.ts';
import { codedMeter } from '../../src/modalities/realtime/meter.ts';
import {
  costOfSeconds,
  pcmBytesWithin,
  pcmMs,
  perMillionSeconds,
  realtimeRate,
  secondsCoveredBy,
} from '../../src/modalities/realtime/pricing.ts';
import { listenUrl } from '../../src/providers/deepgram/live.ts';

const pcm = { bytesPerSample: 2, sampleRate: 16_000, channels: 1 };

describe('realtime pricing', () => {
  it('turns a per-minute rate into nano-dollars per million seconds, rounding up', () => {
    expect(perMillionSeconds(7_700_000n)).toBe(128_333_333_334n);
    expect(perMillionSeconds(6_000_000n)).toBe(100_000_000_000n);
    // A minute costs the per-minute rate (to the nano-dollar) plus the 5% fee.
    expect(costOfSeconds(60, perMillionSeconds(6_000_000n))).toBe(6_300_000n);
  });

  it('finds the most whole seconds a granted amount pays for', () => {
    const price = perMillionSeconds(7_700_000n);
    const seconds = secondsCoveredBy(1_914_998n, price, 60);
    expect(seconds).toBe(14);
    expect(costOfSeconds(seconds, price)).toBeLessThanOrEqual(1_914_998n);
    expect(costOfSeconds(seconds + 1, price)).toBeGreaterThan(1_914_998n);
    expect(secondsCoveredBy(10n ** 12n, price, 60)).toBe(60);
    expect(secondsCoveredBy(0n, price, 60)).toBe(0);
  });

  it('counts raw audio by its size, a started millisecond as one, and cuts it at whole samples', () => {
    expect(pcmMs(32_000, pcm)).toBe(1000);
    expect(pcmMs(32_002, pcm)).toBe(1001);
    expect(pcmMs(32_000, { ...pcm, channels: 2 })).toBe(500);
    expect(pcmBytesWithin(1000, pcm)).toBe(32_000);
    expect(pcmBytesWithin(1000, { bytesPerSample: 2, sampleRate: 44_100, channels: 2 })).toBe(176_400);
    expect(pcmBytesWithin(1, { bytesPerSample: 2, sampleRate: 22_050, channels: 1 })).toBe(44);
  });

  it('reckons coded audio at its worst case, 750 bytes a second, never cutting bytes that last longer', () => {
    expect(codedMeter.exact).toBe(false);
    expect(codedMeter.msOf(750)).toBe(1000);
    expect(codedMeter.msOf(751)).toBe(1002);
    expect(codedMeter.bytesWithin(74_000)).toBe(55_500);
    expect(codedMeter.bytesWithin(1)).toBe(0);
    for (const ms of [1, 2, 999, 1001, 74_000, 3_600_001])
      expect(codedMeter.msOf(codedMeter.bytesWithin(ms))).toBeLessThanOrEqual(ms);
  });

  it('bills the streaming rate, else the one audio rate, else nothing', () => {
    const model = (perUnitNanos: Record<string, bigint>) =>
      ({ prices: { perUnitNanos } }) as unknown as CatalogModel;
    expect(realtimeRate(model({ audio_minute: 1n, audio_minute_realtime: 2n }))).toBe(2n);
    expect(realtimeRate(model({ audio_minute: 1n }))).toBe(1n);
    expect(realtimeRate(model({ character: 1n }))).toBeUndefined();
  });
});

describe("Deepgram's listen URL", () => {
  it('is a ws(s) URL under the base with or without /v1, carrying the options', () => {
    const upstream = { model: 'nova-3', apiKey: 'k', timeoutMs: 1000 };
    expect(
      listenUrl(
        { ...upstream, baseUrl: 'https://api.deepgram.com' },
        { encoding: 'linear16', sampleRate: 16000 },
      ),
    ).toBe('wss://api.deepgram.com/v1/listen?model=nova-3&encoding=linear16&sample_rate=16000');
    expect(listenUrl({ ...upstream, baseUrl: 'http://127.0.0.1:9/v1/' }, { interimResults: false })).toBe(
      'ws://127.0.0.1:9/v1/listen?model=nova-3&interim_results=false',
    );
  });
});
