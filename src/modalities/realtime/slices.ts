import type { CatalogModel } from '../../catalog/types.ts';
import type { SlicedStream } from '../../pipeline/sliced.ts';
import { type AudioMeter, CODED_HOLD_TTL_MS, CODED_MAX_SLICE_SECONDS } from './meter.ts';
import { audioLine, MIN_SLICE_SECONDS, SLICE_SECONDS } from './pricing.ts';

/** The next slice is reserved when the audio comes this close to the end of what is held. */
export const LEAD_MS = 10_000;

/**
 * A realtime stream as the pipeline holds it in slices (`pipeline/sliced.ts`): its position in milliseconds of
 * audio, priced by the second at `unitPrice` (nano-dollars per million seconds). Raw audio's slices are a minute
 * each; coded audio's (whose worst case is mostly never used, and whose holds wait for the provider's reports) grow
 * up to `CODED_MAX_SLICE_SECONDS` and live for the longest a coded stream may run.
 */
export function audioSlices(
  model: CatalogModel,
  meter: AudioMeter,
  unitPrice: bigint,
  options: Pick<SlicedStream, 'discount' | 'log' | 'onSettled'>,
): SlicedStream {
  const maxSliceSeconds = meter.exact ? SLICE_SECONDS : CODED_MAX_SLICE_SECONDS;
  return {
    name: 'realtime',
    model,
    lines: (seconds) => [audioLine(seconds, unitPrice)],
    scale: 1000,
    // A slice covers as much as every slice before it, from a minute up to the most one may: a short stream holds
    // little, and a long one (or coded audio's worst case) needs few holds.
    sliceUnits: (coveredMs) =>
      Math.min(maxSliceSeconds, Math.max(SLICE_SECONDS, Math.floor(coveredMs / 1000))),
    minUnits: MIN_SLICE_SECONDS,
    lead: LEAD_MS,
    ...(!meter.exact && { ttlMs: CODED_HOLD_TTL_MS }),
    // Coded audio's durations are the provider's: the bytes give only a worst case.
    usageReported: !meter.exact,
    unavailable: 'The gateway could not hold funds for more audio; the stream ends here',
    ...options,
  };
}
