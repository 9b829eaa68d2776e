import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { GptEncoding } from 'gpt-tokenizer/GptEncoding';

const require = createRequire(import.meta.url);
let encoder: GptEncoding | undefined;

/**
 * The o200k encoder, built on first use (processes that never count tokens, the CLI and migrations, never pay
 * for it). Its rank table is read from the package's `o200k_base.tiktoken` (OpenAI's published file) rather than
 * required as the package's 2.4 MB JavaScript module: the same table (a test compares them), without the module's
 * source, bytecode and array literals, which held about 10 MB more of the gateway's memory.
 */
export function o200k(): GptEncoding {
  if (encoder === undefined) {
    const { GptEncoding } =
      require('gpt-tokenizer/GptEncoding') as typeof import('gpt-tokenizer/GptEncoding');
    encoder = GptEncoding.getEncodingApi('o200k_base', () => o200kRanks());
    encoder.setMergeCacheSize(MERGE_CACHE_ENTRIES);
  }
  return encoder;
}

/**
 * The ranks as the package's generator makes them from the `.tiktoken` file (a base64 token and its rank a line):
 * index = rank; a token that is valid UTF-8 (and round-trips) as its string, any other as its bytes; a rank
 * missing from the file as ''.
 */
export function o200kRanks(): (string | number[])[] {
  const text = readFileSync(require.resolve('gpt-tokenizer/data/o200k_base.tiktoken'), 'latin1');
  const ranks: (string | number[])[] = [];
  for (let from = 0; from < text.length; ) {
    const space = text.indexOf(' ', from);
    let end = text.indexOf('\n', space);
    if (end === -1) end = text.length;
    const bytes = Buffer.from(text.slice(from, space), 'base64');
    const rank = Number(text.slice(space + 1, end));
    while (ranks.length < rank) ranks.push('');
    ranks.push(asText(bytes) ?? [...bytes]);
    from = end + 1;
  }
  return ranks;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

function asText(bytes: Buffer): string | undefined {
  try {
    const text = UTF8.decode(bytes);
    return Buffer.byteLength(text, 'utf8') === bytes.length ? text : undefined;
  } catch {
    return undefined;
  }
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
