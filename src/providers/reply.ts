import type { z } from 'zod';
import { UpstreamError } from './errors.ts';
import type { UpstreamResponse } from './http.ts';

/**
 * A provider's 2xx body, checked against the part of its documented shape the gateway relies on. A body that does
 * not fit is the provider's failure (502), not the client's.
 */
export async function parseReply<T extends z.ZodType>(
  response: UpstreamResponse,
  schema: T,
  what: string,
): Promise<z.infer<T>> {
  let body: unknown;
  try {
    body = JSON.parse(await response.body.text());
  } catch {
    throw new UpstreamError('server', `the provider answered something other than JSON ${what}`);
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue ? ` (${issue.path.join('.') || 'body'}: ${issue.message})` : '';
    throw new UpstreamError('server', `the provider answered without ${what}${where}`);
  }
  return parsed.data;
}

/** A usage figure as a provider reports it, or undefined when it is missing or not a count (never a silent zero). */
export function reportedCount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** The same number of results as inputs, or the provider's answer cannot be matched to the request. */
export function expectCount(actual: number, expected: number, what: string): void {
  if (actual !== expected) {
    throw new UpstreamError('server', `the provider answered ${actual} ${what} for ${expected} inputs`);
  }
}

/** Results placed by their `index`: exactly one for each of `count` inputs. */
export function inInputOrder<T>(items: { index: number; value: T }[], count: number, what: string): T[] {
  expectCount(items.length, count, what);
  const ordered = new Map<number, T>();
  for (const { index, value } of items) {
    if (index >= count || ordered.has(index)) {
      throw new UpstreamError(
        'server',
        `the provider answered ${what} for an unknown or repeated input ${index}`,
      );
    }
    ordered.set(index, value);
  }
  return Array.from({ length: count }, (_, index) => ordered.get(index) as T);
}
