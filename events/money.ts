import { z } from 'zod';

/** Money in events: integer nano-dollars (1e-9 USD) as a decimal string, never a float. */
export const Nanos = z.string().regex(/^-?\d+$/, 'an integer amount of nano-dollars as a string');

export const NANOS_PER_CENT = 10_000_000n;
