import type { CatalogModel } from '../../catalog/types.ts';
import {
  ceilDiv,
  type Discount,
  type PriceLine,
  priceCharge,
  unitsCoveredBy,
} from '../../contracts/money.ts';

/** Audio one hold covers: reserved ahead, settled once streamed. */
export const SLICE_SECONDS = 60;
/** The least audio a hold is granted for; with less room than this under a cap, the stream stops. */
export const MIN_SLICE_SECONDS = 1;

/**
 * The per-minute rate of streamed audio, in nano-dollars: the model's streaming rate (`audio_minute_realtime`), else
 * its one audio rate.
 */
export function realtimeRate(model: CatalogModel): bigint | undefined {
  const prices = model.prices.perUnitNanos;
  return prices?.audio_minute_realtime ?? prices?.audio_minute;
}

/**
 * Nano-dollars per million seconds of audio, as POST /v1/audio/transcriptions bills: rounded up where a minute's
 * price is not a multiple of 60 nano-dollars (by less than one nano-dollar per million seconds).
 */
export const perMillionSeconds = (perMinuteNanos: bigint) => ceilDiv(perMinuteNanos * 1_000_000n, 60n);

export const audioLine = (seconds: number, unitPriceNanosPerMillion: bigint): PriceLine => ({
  item: 'audio_seconds',
  quantity: seconds,
  unitPriceNanosPerMillion,
});

/** `byok`: a stream on the requester's own provider key is charged the platform fee alone. */
export const costOfSeconds = (seconds: number, unitPrice: bigint, discount: Discount = 'none') =>
  priceCharge([audioLine(seconds, unitPrice)], discount).chargedNanos;

/** The most whole seconds of audio (at most `max`) whose charge fits in `nanos`. */
export const secondsCoveredBy = (
  nanos: bigint,
  unitPrice: bigint,
  max: number,
  discount: Discount = 'none',
) => unitsCoveredBy((seconds) => costOfSeconds(seconds, unitPrice, discount), nanos, max);

/** Raw audio whose duration follows from its size. */
export interface PcmFormat {
  bytesPerSample: number;
  sampleRate: number;
  channels: number;
}

const bytesPerSecond = (f: PcmFormat) => f.bytesPerSample * f.sampleRate * f.channels;

/** The duration of so many bytes, a started millisecond counting as one. */
export const pcmMs = (bytes: number, format: PcmFormat) => Math.ceil((bytes * 1000) / bytesPerSecond(format));

/** The most bytes, in whole sample frames, that last at most `ms`. */
export function pcmBytesWithin(ms: number, format: PcmFormat): number {
  const frame = format.bytesPerSample * format.channels;
  return Math.floor((ms * bytesPerSecond(format)) / 1000 / frame) * frame;
}
