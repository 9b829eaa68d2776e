import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { invalidField } from '../contracts/errors.ts';
import { dollarsToCents } from '../payments/stripe.ts';

/** A posted form's fields (the dashboard's scope parses `application/x-www-form-urlencoded` into an object). */
export const formOf = (request: FastifyRequest) => (request.body ?? {}) as Record<string, unknown>;

/** Whether the form has the field at all: each form posts only its own fields, and an absent one is left as it is. */
export const posted = (body: Record<string, unknown>, field: string) => typeof body[field] === 'string';

/** A field's text, trimmed and cut to `max`; undefined when absent or blank. */
export const text = (value: unknown, max = 200) =>
  typeof value === 'string' && value.trim() !== '' ? value.trim().slice(0, max) : undefined;

/** Dollars as typed (`25`, `12.50`, `$7`) to whole cents, without a float; undefined when blank. */
export function dollars(value: unknown, field: string): number | undefined {
  const given = text(value, 40);
  if (given === undefined) return undefined;
  const cents = dollarsToCents(given);
  if (cents === undefined) throw invalidField(field, 'an amount in dollars, such as 25 or 12.50');
  return cents;
}

/**
 * A number as typed; undefined when blank. Its range and precision are the API's schema's to check, so that the
 * dashboard refuses exactly what the API refuses.
 */
export function decimal(value: unknown, field: string, what = 'a number'): number | undefined {
  const given = text(value, 40);
  if (given === undefined) return undefined;
  if (!/^-?\d+(\.\d+)?$/.test(given)) throw invalidField(field, what);
  return Number(given);
}

/** A textarea's lines, trimmed, blank ones dropped, with their line numbers (1-based) for the errors. */
export function lines(value: unknown): { line: number; text: string }[] {
  if (typeof value !== 'string') return [];
  return value
    .split(/\r?\n/)
    .map((line, i) => ({ line: i + 1, text: line.trim() }))
    .filter((l) => l.text !== '');
}

/**
 * Checks the input with the API route's own schema and refuses the first issue naming its field, as the API does
 * (`'markup_percent': Too big: …`). `describe` names the field of an issue's path (a form's field where it differs
 * from the API's), and may add a detail (the line of a list typed one item a line).
 */
export function checked<T extends z.ZodType>(
  schema: T,
  input: unknown,
  describe: (path: PropertyKey[]) => { field: string; detail?: string } = (path) => ({
    field: path.map(String).join('.') || 'form',
  }),
): z.infer<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const { field, detail } = describe(issue?.path ?? []);
  const why = issue?.message ?? 'invalid';
  throw invalidField(field, detail ? `${detail}: ${why}` : why);
}
