import { createHash } from 'node:crypto';
import type { KeyHolder } from '../accounts/live-state.ts';

/**
 * JSON with object keys sorted at every depth, so that two bodies that mean the same thing (`{"a":1,"b":2}` and
 * `{"b":2,"a":1}`) hash alike. Array order is kept: the order of messages and tools shapes the answer.
 */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Whose entries these are: the account, or one of its sub-accounts. A reseller's customers never share answers
 * with each other or with the reseller, so the scope is in every key and every lookup.
 */
export function scopeOf(auth: KeyHolder): string {
  return auth.subAccountId ? `${auth.accountId}/${auth.subAccountId}` : auth.accountId;
}

/**
 * Body fields that do not shape the answer: how it is delivered (`stream`), the gateway's own switches, and what
 * only labels the request. Every other field is in the key, the ones the gateway does not know included, so a
 * parameter passed through to a provider can never be left out of it.
 */
const NOT_SHAPING = new Set([
  'model',
  'stream',
  'stream_options',
  'cache',
  'user',
  'metadata',
  'store',
  'webhook_url',
  'baseline_model',
  'encoding_format',
]);

/** The parts of an exact key: the endpoint's kind, the resolved model, and what shapes the answer. */
export function keyParts(
  kind: string,
  model: string,
  body: Record<string, unknown>,
): Record<string, unknown> {
  const shaping: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) if (!NOT_SHAPING.has(name)) shaping[name] = value;
  // Two spellings of the same limit are one limit.
  if (shaping.max_completion_tokens !== undefined && shaping.max_tokens === undefined) {
    shaping.max_tokens = shaping.max_completion_tokens;
    delete shaping.max_completion_tokens;
  }
  return { kind, model, body: shaping };
}

export const exactKey = (parts: Record<string, unknown>) => sha256(canonicalJson(parts));
