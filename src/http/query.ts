import { z } from 'zod';

/**
 * A whole number in a query string, in decimal digits. `z.coerce.number()` would take `1e2`, `0x10`, ` 5` and
 * an empty value (as 0), and a parameter given twice would fail as "received NaN". The documented schema stays
 * an integer's: only a value of digits is turned into a number before the check.
 */
export function queryInteger(min: number, max: number) {
  return z.preprocess(
    (value) => (typeof value === 'string' && /^[0-9]{1,16}$/.test(value) ? Number(value) : value),
    z
      .number({
        error: (issue) =>
          issue.code === 'invalid_type' ? 'expected a whole number in decimal digits, given once' : undefined,
      })
      .int()
      .min(min)
      .max(max),
  );
}
