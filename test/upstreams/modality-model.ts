import { createHash } from 'node:crypto';
import { words } from './model.ts';

/**
 * The deterministic "models" behind the embeddings, moderation and rerank simulators, shared by every wire format
 * so that tests can compute what any provider answers.
 *
 * - tokens(text) = words(text) (model.ts): simulators report it as usage, which differs from the gateway's o200k
 *   count, so a test can tell a reported figure from an estimate.
 * - vector(text, n) = n values (byte - 128) / 128 of SHA-256(`${i}:${text}`) chunks: multiples of 1/128, so
 *   exact in float32 and in base64 after a round trip. The default length is 8.
 * - moderation: a text containing a word of FLAGGING_WORDS is flagged in that word's category with score 0.9;
 *   every other category scores 0.01.
 * - rerank: relevance = shared distinct lower-case words of query and document / distinct query words.
 */

export const DEFAULT_DIMENSIONS = 8;

export const tokens = (text: string) => words(text);

export function vector(text: string, dimensions = DEFAULT_DIMENSIONS): number[] {
  const values: number[] = [];
  for (let block = 0; values.length < dimensions; block++) {
    const digest = createHash('sha256').update(`${block}:${text}`).digest();
    for (const byte of digest) {
      if (values.length === dimensions) break;
      values.push((byte - 128) / 128);
    }
  }
  return values;
}

/** Category (in the simulated provider's own names, mapped by each simulator) of each flagging word. */
export type SimCategory = 'violence' | 'hate' | 'illicit';
export const FLAGGING_WORDS: ReadonlyMap<string, SimCategory> = new Map([
  ['kill', 'violence'],
  ['hate', 'hate'],
  ['bomb', 'illicit'],
]);

export function flaggedCategories(text: string): Set<SimCategory> {
  const found = new Set<SimCategory>();
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const category = FLAGGING_WORDS.get(word);
    if (category) found.add(category);
  }
  return found;
}

export const FLAGGED_SCORE = 0.9;
export const CLEAN_SCORE = 0.01;

const distinctWords = (text: string) => new Set(text.toLowerCase().match(/[a-z0-9]+/g) ?? []);

export function relevance(query: string, document: string): number {
  const asked = distinctWords(query);
  if (asked.size === 0) return 0;
  const present = distinctWords(document);
  let shared = 0;
  for (const word of asked) if (present.has(word)) shared++;
  return shared / asked.size;
}

/** Documents most relevant first (ties in document order), as rerank APIs answer. */
export function ranking(query: string, documents: string[]): { index: number; score: number }[] {
  return documents
    .map((document, index) => ({ index, score: relevance(query, document) }))
    .sort((a, b) => b.score - a.score || a.index - b.index);
}

/** A JSON body's field as a list of strings, or undefined when it is not one. */
export function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined;
}
