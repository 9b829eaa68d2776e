import { createRequire } from 'node:module';
import type * as O200kBase from 'gpt-tokenizer/encoding/o200k_base';

// The o200k rank table is ~2.4 MB of JS and takes ~200 ms to evaluate, so it is required on first
// use rather than imported: processes that never count tokens (CLI, migrations) never pay for it.
const require = createRequire(import.meta.url);
let encoder: typeof O200kBase | undefined;

export function o200k(): typeof O200kBase {
  if (encoder === undefined) {
    encoder = require('gpt-tokenizer/encoding/o200k_base') as typeof O200kBase;
    encoder.setMergeCacheSize(MERGE_CACHE_ENTRIES);
  }
  return encoder;
}

/**
 * The library caches the merges of 100,000 chunks by default; a stream of distinct chunks (CJK text, base64)
 * fills it, and each major garbage collection then walks it, which measured as 20-30 ms pauses of the event
 * loop. A smaller cache keeps the hits of ordinary prose (its words repeat) without the pauses.
 */
const MERGE_CACHE_ENTRIES = 10_000;

// The API treats '<|endoftext|>' and friends in user text as plain text; the library's default
// would throw on them instead.
export const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * BPE merges inside one pre-tokenizer chunk, and a chunk is a run of one character class (letters with no
 * space between them, spaces, punctuation), so its cost grows with the square of the run: 40k characters of
 * `a` took 1.8 s, 100k CJK characters 18 s. Runs longer than this are counted in pieces of this length, which
 * makes the cost linear (measured worst, CJK: ~0.6 µs a character) and changes counts only for such runs, where
 * a piece boundary can add a token.
 */
const RUN = 64;
const LONG_RUN = new RegExp(`\\S{${RUN + 1},}|\\s{${RUN + 1},}`, 'g');

/** The text in pieces whose pre-tokenizer chunks are at most RUN characters long. */
export function* boundedPieces(text: string): Generator<string> {
  let from = 0;
  for (const match of text.matchAll(LONG_RUN)) {
    if (match.index > from) yield text.slice(from, match.index);
    const end = match.index + match[0].length;
    for (let at = match.index; at < end; ) {
      let cut = Math.min(end, at + RUN);
      // Never between the halves of a surrogate pair: each half alone would count as a replacement character.
      if (cut < end && isLowSurrogate(text.charCodeAt(cut))) cut++;
      yield text.slice(at, cut);
      at = cut;
    }
    from = end;
  }
  if (from < text.length) yield text.slice(from);
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** o200k tokens of a text, with long runs counted in pieces (see RUN). Linear in the text's length. */
export function countBounded(text: string): number {
  const { countTokens } = o200k();
  let total = 0;
  for (const piece of boundedPieces(text)) total += countTokens(piece, PLAIN_TEXT);
  return total;
}

/**
 * A byte-level BPE never produces more tokens than the text has UTF-8 bytes, so this bounds any count from
 * above; it stands in for a count when counting would take too long.
 */
export function tokenUpperBound(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
