import { createRequire } from 'node:module';
import { RankTable } from './ranks.ts';

const require = createRequire(import.meta.url);
let encoder: Encoder | undefined;

/**
 * The o200k encoder, built on first use (processes that never count tokens, the CLI and migrations, never pay
 * for it), from the `gpt-tokenizer` package's copy of OpenAI's published `o200k_base.tiktoken` and its
 * pre-tokenizer pattern. The merges are tiktoken's, run here over a packed table (see `RankTable`) instead of
 * the package's encoder, whose tables held 18.5 MB of the idle gateway; a test holds the two to the same tokens.
 */
export function o200k(): Encoder {
  if (encoder === undefined) {
    const { O200K_TOKEN_SPLIT_REGEX } = require('gpt-tokenizer/encodingParams/constants') as {
      O200K_TOKEN_SPLIT_REGEX: RegExp;
    };
    const table = RankTable.fromTiktoken(require.resolve('gpt-tokenizer/data/o200k_base.tiktoken'));
    encoder = new Encoder(table, O200K_TOKEN_SPLIT_REGEX);
  }
  return encoder;
}

const NONE = 0x7fffffff;
const UTF8 = new TextEncoder();

/**
 * Byte-pair encoding as tiktoken does it: the text split by the pre-tokenizer's pattern into chunks, a chunk
 * that is a token whole is one token, any other is merged from its bytes, always the adjacent pair of lowest rank
 * first. Special tokens are never recognised: the API counts '<|endoftext|>' in user text as plain text.
 * Scratch arrays are reused between calls, which is safe because nothing here awaits.
 */
export class Encoder {
  private readonly split: RegExp;
  private bytes = new Uint8Array(1024);
  private bounds = new Int32Array(1025);
  private ranks = new Int32Array(1025);

  constructor(
    readonly table: RankTable,
    pattern: RegExp,
  ) {
    this.split = new RegExp(
      pattern.source,
      pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`,
    );
  }

  count(text: string): number {
    let total = 0;
    this.eachChunk(text, (length) => {
      total += this.merge(length);
    });
    return total;
  }

  encode(text: string, into: number[] = []): number[] {
    this.eachChunk(text, (length) => {
      const parts = this.merge(length);
      const { bytes, bounds, table } = this;
      for (let i = 0; i < parts; i++)
        into.push(table.rankOf(bytes, bounds[i] as number, bounds[i + 1] as number));
    });
    return into;
  }

  /** The bytes of the tokens as text, without a character the last token leaves incomplete. */
  decodeWhole(tokens: readonly number[]): string {
    const parts = tokens.map((rank) => this.table.tokenBytes(rank));
    return new TextDecoder().decode(Buffer.concat(parts), { stream: true });
  }

  /** Each chunk's UTF-8 bytes in `this.bytes`, its length given to `use`. */
  private eachChunk(text: string, use: (length: number) => void): void {
    const split = this.split;
    split.lastIndex = 0;
    for (let match = split.exec(text); match !== null; match = split.exec(text)) {
      const chunk = match[0];
      if (chunk.length === 0) {
        split.lastIndex++;
        continue;
      }
      use(this.load(chunk));
    }
  }

  private load(chunk: string): number {
    if (this.bytes.length < chunk.length * 3) this.grow(chunk.length * 3);
    const bytes = this.bytes;
    for (let i = 0; i < chunk.length; i++) {
      const code = chunk.charCodeAt(i);
      if (code >= 0x80) return UTF8.encodeInto(chunk, bytes).written;
      bytes[i] = code;
    }
    return chunk.length;
  }

  private grow(size: number): void {
    this.bytes = new Uint8Array(size);
    this.bounds = new Int32Array(size + 1);
    this.ranks = new Int32Array(size + 1);
  }

  /** Merges `this.bytes[0, length)`; leaves the token boundaries in `this.bounds` and returns how many tokens. */
  private merge(length: number): number {
    const { bytes, bounds, ranks, table } = this;
    bounds[0] = 0;
    bounds[1] = length;
    if (table.rankOf(bytes, 0, length) !== -1) return 1;
    // bounds[i] is where part i starts; ranks[i] the rank of parts i and i+1 joined (NONE when not a token).
    let parts = length;
    for (let i = 0; i <= length; i++) bounds[i] = i;
    for (let i = 0; i < parts - 1; i++) ranks[i] = pairRank(table, bytes, i, i + 2);
    ranks[parts - 1] = NONE;
    while (parts > 1) {
      let lowest = NONE;
      let at = -1;
      for (let i = 0; i < parts - 1; i++) {
        if ((ranks[i] as number) < lowest) {
          lowest = ranks[i] as number;
          at = i;
        }
      }
      if (at === -1) break;
      // Part at+1 joins part at: its start and its pair's rank go.
      bounds.copyWithin(at + 1, at + 2, parts + 1);
      ranks.copyWithin(at, at + 1, parts);
      parts--;
      ranks[at] =
        at + 1 < parts ? pairRank(table, bytes, bounds[at] as number, bounds[at + 2] as number) : NONE;
      if (at > 0) ranks[at - 1] = pairRank(table, bytes, bounds[at - 1] as number, bounds[at + 1] as number);
    }
    return parts;
  }
}

function pairRank(table: RankTable, bytes: Uint8Array, from: number, to: number): number {
  const rank = table.rankOf(bytes, from, to);
  return rank === -1 ? NONE : rank;
}

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
  const tokenizer = o200k();
  let total = 0;
  for (const piece of boundedPieces(text)) total += tokenizer.count(piece);
  return total;
}

/**
 * A byte-level BPE never produces more tokens than the text has UTF-8 bytes, so this bounds any count from
 * above; it stands in for a count when counting would take too long.
 */
export function tokenUpperBound(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
