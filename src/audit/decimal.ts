const NANOS_PER_DOLLAR = 1_000_000_000n;

/** Nano-dollars as an exact decimal string of dollars with nine places: 1234n → "0.000001234". */
export function nanosToUsd(nanos: bigint): string {
  const magnitude = nanos < 0n ? -nanos : nanos;
  const fraction = (magnitude % NANOS_PER_DOLLAR).toString().padStart(9, '0');
  return `${nanos < 0n ? '-' : ''}${magnitude / NANOS_PER_DOLLAR}.${fraction}`;
}

/** The same, with a dollar sign, for reading in reports. */
export function usd(nanos: bigint): string {
  return nanos < 0n ? `-$${nanosToUsd(-nanos)}` : `$${nanosToUsd(nanos)}`;
}
