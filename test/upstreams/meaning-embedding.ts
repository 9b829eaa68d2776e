import { createHash } from 'node:crypto';

/**
 * The simulators' "meaning" embedding model (OpenAI's `text-embedding-3-large` in openai-modalities.ts): a
 * deterministic bag of meaning-bearing words, so that a semantic cache can be tested honestly against it.
 *
 * - Text is lower-cased; `n't` reads as `not`, other contractions and possessives (`what's`, `France's`) lose
 *   their ending; words are runs of letters and digits; a trailing plural `s` is dropped from words of more than
 *   three letters; a few synonyms map to one word (SYNONYMS).
 * - Function words and politeness (STOPWORDS) carry no meaning and are dropped: "What is the capital of France?"
 *   and "Tell me France's capital, please" are both {capital, france}.
 * - Each remaining word is a pseudo-random unit direction (from SHA-256 of the word) in `dimensions` (default 256)
 *   dimensions, added once per occurrence; a negation (NEGATIONS) is one direction of weight 2, so "is not" moves
 *   a sentence far from "is". The sum is scaled to unit length.
 *
 * So a paraphrase with the same meaning-bearing words scores 1.0; another entity in a two-word question about 0.5;
 * a negation of a three-word question about 0.65 (3 / sqrt(3 * 7)); unrelated texts about 0 (± 1/sqrt(256)). A
 * real model also matches paraphrases that change the words ("chief city" for "capital"); this one does not.
 */

export const MEANING_DIMENSIONS = 256;

const STOPWORDS = new Set(
  `a an the is are was were be been being am do does did doing have has had of in on at to for from by with about
  as into onto than then that this these those it its what which who whom whose when where why how tell me my i
  you your we our us they them their he she his her please could would can will shall should may might must
  and or but so if just some any there here let know want like give show explain describe say kindly`
    .split(/\s+/)
    .filter(Boolean),
);

const NEGATIONS = new Set([
  'not',
  'no',
  'never',
  'none',
  'nothing',
  'nobody',
  'neither',
  'nor',
  'without',
  'cannot',
]);

const SYNONYMS: Record<string, string> = {
  biggest: 'largest',
  big: 'large',
  automobile: 'car',
  quick: 'fast',
  rapid: 'fast',
  purchase: 'buy',
};

/** The meaning-bearing words of a text, as the model reads it. */
export function meaningWords(text: string): string[] {
  const normalized = text
    .toLowerCase()
    .replace(/n['’]t\b/g, ' not')
    .replace(/['’](s|re|ve|ll|d|m)\b/g, '');
  const words = normalized.match(/[a-z0-9]+/g) ?? [];
  return words
    .map((w) => (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w))
    .map((w) => SYNONYMS[w] ?? w)
    .filter((w) => NEGATIONS.has(w) || !STOPWORDS.has(w));
}

function direction(word: string, dimensions: number): number[] {
  const values: number[] = [];
  for (let block = 0; values.length < dimensions; block++) {
    const digest = createHash('sha256').update(`${block}:${word}`).digest();
    for (const byte of digest) {
      if (values.length === dimensions) break;
      values.push((byte - 127.5) / 127.5);
    }
  }
  const norm = Math.sqrt(values.reduce((s, v) => s + v * v, 0));
  return values.map((v) => v / norm);
}

export function meaningVector(text: string, dimensions = MEANING_DIMENSIONS): number[] {
  const sum = new Array<number>(dimensions).fill(0);
  for (const word of meaningWords(text)) {
    const weight = NEGATIONS.has(word) ? 2 : 1;
    const dir = direction(NEGATIONS.has(word) ? '<not>' : word, dimensions);
    for (let i = 0; i < dimensions; i++) sum[i] = (sum[i] as number) + weight * (dir[i] as number);
  }
  const norm = Math.sqrt(sum.reduce((s, v) => s + v * v, 0));
  return norm === 0 ? sum : sum.map((v) => v / norm);
}

export function cosine(a: number[], b: number[]): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i] as number) * (b[i] as number);
  return dot;
}
