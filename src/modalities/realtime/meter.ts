import { HOLD_TTL_MS } from '../../billing/spending.ts';
import { type PcmFormat, pcmBytesWithin, pcmMs } from './pricing.ts';

/**
 * How much audio the bytes passed to the provider may be, so that it is held before it is passed on. Raw audio's
 * duration follows from its size exactly. Coded audio's (a container, or a compressed encoding) is known only from
 * the provider's reports, which follow the audio; until then it is reckoned at its worst case, the longest the
 * bytes could last, so the holds are never behind what the provider may bill.
 */
export interface AudioMeter {
  /** True when `msOf` is the duration itself; false when it is an upper bound and the provider's report bills. */
  exact: boolean;
  /** The duration of so many bytes (at most), a started millisecond counting as one. */
  msOf(bytes: number): number;
  /** The most bytes that last at most `ms` (whole sample frames of raw audio). */
  bytesWithin(ms: number): number;
}

/**
 * The fewest bytes a second of coded speech takes: 6 kbit/s, Opus's lowest rate, which is also what browsers record
 * WebM and Ogg in. The other formats a live client streams are denser (MP3 and AAC from 8 kbit/s, G.729 8, AMR-WB
 * 6.6 plus framing, WAV 64 and up). Sparser audio exists (Speex and AMR-NB's lowest modes, silence that DTX or FLAC
 * squeezes to almost nothing): it is still held as the provider reports it, and only at a cap can such audio
 * already on its way pass the hold, an overrun that is charged and that the audit flags.
 */
export const CODED_FLOOR_BYTES_PER_SECOND = 750;

/**
 * Coded audio's worst case is mostly never used, and its holds stay open until the provider's reports (at the
 * latest its summary) reach them: its slices grow up to ten minutes, which keeps their number, and the events they
 * cost, down.
 */
export const CODED_MAX_SLICE_SECONDS = 600;

/**
 * A coded stream's holds wait for the provider's reports, not for the bytes, so one may stay open for most of the
 * stream: the stream is bounded, and its holds live past that bound (with the ordinary hold life as margin), so none
 * expires under a stream still running.
 */
export const CODED_STREAM_MAX_MS = 3 * 3600 * 1000;
export const CODED_HOLD_TTL_MS = CODED_STREAM_MAX_MS + HOLD_TTL_MS;

export const pcmMeter = (format: PcmFormat): AudioMeter => ({
  exact: true,
  msOf: (bytes) => pcmMs(bytes, format),
  bytesWithin: (ms) => pcmBytesWithin(ms, format),
});

export const codedMeter: AudioMeter = {
  exact: false,
  msOf: (bytes) => Math.ceil((bytes * 1000) / CODED_FLOOR_BYTES_PER_SECOND),
  bytesWithin: (ms) => Math.floor((ms * CODED_FLOOR_BYTES_PER_SECOND) / 1000),
};
