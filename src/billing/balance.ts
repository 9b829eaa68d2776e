import { NANOS_PER_CENT } from '../../events/money.ts';

/** A balance as the API and the audit show it. */
export interface Balance {
  cents: number;
  usd: number;
}

/** Whole cents never round up: the balance shown is never more than the money held. */
export function toBalance(nanos: bigint): Balance {
  const cents = nanos >= 0n ? nanos / NANOS_PER_CENT : -((-nanos + NANOS_PER_CENT - 1n) / NANOS_PER_CENT);
  return { cents: Number(cents), usd: Number(cents) / 100 };
}
