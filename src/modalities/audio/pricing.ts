import type { CatalogModel } from '../../catalog/types.ts';
import { RequestRefused } from '../../contracts/errors.ts';
import { ceilDiv, type PriceLine } from '../../contracts/money.ts';

/**
 * How audio is billed. Transcription: per second of audio (whole seconds, rounded up) at the model's per-minute
 * price. Speech: per character of input. Prices come from `perUnitNanos` (`audio_minute`, `character`).
 */

/** OpenAI's upload limit for transcription (25 MB); GATEWAY_AUDIO_MAX_BYTES changes it. */
export const DEFAULT_MAX_AUDIO_BYTES = 25 * 1024 * 1024;

export function maxAudioBytes(env: NodeJS.ProcessEnv): number {
  const configured = Number(env.GATEWAY_AUDIO_MAX_BYTES);
  return Number.isSafeInteger(configured) && configured > 0 ? configured : DEFAULT_MAX_AUDIO_BYTES;
}

/**
 * The duration held before a transcription, when the audio's own header does not give it: the bytes at 16 kbit/s,
 * below the bitrate of any usual speech recording (MP3 and AAC 32–128 kbit/s, Opus voice 16–32, PCM 256), so the
 * hold covers the real duration; at most four hours, at least one second.
 */
export const HOLD_BYTES_PER_SECOND = 2_000;
export const MAX_HOLD_SECONDS = 4 * 60 * 60;
/** The duration billed when the provider reports none and the audio has no header to read it from: 32 kbit/s. */
export const ESTIMATE_BYTES_PER_SECOND = 4_000;

/** Providers that bill a minimum per request (Groq: 10 seconds). */
const MIN_BILLED_SECONDS: Readonly<Record<string, number>> = { groq: 10 };

export function holdSeconds(bytes: number, headerSeconds: number | undefined): number {
  // A header's duration is exact; a second more covers a provider that rounds its measure up.
  const seconds = headerSeconds === undefined ? bytes / HOLD_BYTES_PER_SECOND : headerSeconds + 1;
  return Math.min(MAX_HOLD_SECONDS, Math.max(1, Math.ceil(seconds)));
}

export function estimatedSeconds(bytes: number, headerSeconds: number | undefined): number {
  return headerSeconds ?? bytes / ESTIMATE_BYTES_PER_SECOND;
}

function perUnit(model: CatalogModel, unit: 'audio_minute' | 'character'): bigint {
  const nanos = model.prices.perUnitNanos?.[unit];
  if (nanos === undefined) {
    throw new RequestRefused('invalid', `'model': ${model.id} has no ${unit} price to bill by`);
  }
  return nanos;
}

/** Whole seconds billed for a measured duration: rounded up, and at least the provider's minimum. */
export function billedSeconds(model: CatalogModel, seconds: number): number {
  return Math.max(MIN_BILLED_SECONDS[model.provider] ?? 0, Math.ceil(seconds));
}

export function audioSecondsLine(model: CatalogModel, seconds: number): PriceLine {
  return {
    item: 'audio_seconds',
    quantity: billedSeconds(model, seconds),
    // Nano-dollars per million seconds from the per-minute price; rounded up where a minute's price is not a
    // multiple of 60 nano-dollars (never below the provider's rate, by less than a nano-dollar per million seconds).
    unitPriceNanosPerMillion: ceilDiv(perUnit(model, 'audio_minute') * 1_000_000n, 60n),
  };
}

/** Characters as the providers count them: Unicode code points, not UTF-16 units. */
export const characterCount = (text: string) => [...text].length;

export function charactersLine(model: CatalogModel, characters: number): PriceLine {
  return {
    item: 'characters',
    quantity: characters,
    unitPriceNanosPerMillion: perUnit(model, 'character') * 1_000_000n,
  };
}
