import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { boundedPieces, countBounded, o200k, tokenUpperBound } from './bpe.ts';

export type ChatMessageLike = { role: string; content?: unknown; name?: string; tool_calls?: unknown };

// OpenAI's cookbook ("How to count tokens with tiktoken") frames each chat message as
// <|start|>{role or name}\n{content}<|end|>\n, names cost one extra token, and every reply is
// primed with <|start|>assistant<|message|>.
const TOKENS_PER_MESSAGE = 3;
const TOKENS_PER_NAME = 1;
const REPLY_PRIMING_TOKENS = 3;

// A fixed, deliberately high figure so reservations need no image download or decoding: OpenAI's
// documented high-detail cost of a 2048x4096 image on GPT-4o (85 base + 6 tiles x 170). It covers
// typical images; extreme aspect ratios can reach 1,445 there, and other models price differently.
export const IMAGE_TOKENS = 1105;

/**
 * Counting runs on the event loop, so no single call may take more than a few milliseconds. Measured worst
 * case (CJK without spaces) is ~0.6 µs a character: texts up to SYNC_CHARS are counted at once; longer ones
 * are counted in slices with the loop given back between them (the `Async` functions), and a request whose
 * counting has used up COUNT_BUDGET_MS of the loop (or waited COUNT_WAIT_MS for its turns) gets the upper bound
 * for the rest (the hold is then larger than needed; the charge still comes from the provider's usage).
 */
const SYNC_CHARS = 8_192;
const SLICE_CHARS = 2_048;
const YIELD_AFTER_MS = 3;
const COUNT_BUDGET_MS = 400;
const COUNT_WAIT_MS = 3_000;

export function warmTokenizer(): void {
  o200k();
}

/**
 * Tokens of a text. Exact (o200k_base) for ordinary text up to SYNC_CHARS; beyond that the upper bound,
 * since a synchronous caller cannot be given the loop back. Request paths use `countTextTokensAsync`.
 */
export function countTextTokens(text: string): number {
  if (typeof text !== 'string') return countTextTokens(safeJson(text));
  if (text === '') return 0;
  return text.length <= SYNC_CHARS ? countBounded(text) : tokenUpperBound(text);
}

/** Tokens of a text of any size, counted without holding the event loop for more than a few milliseconds. */
export async function countTextTokensAsync(text: string): Promise<number> {
  return countAll([typeof text === 'string' ? text : safeJson(text)]);
}

/** The texts that make up a chat's input, and the fixed tokens of its framing. */
interface Tally {
  fixed: number;
  texts: string[];
}

export function countChatInputTokens(messages: ChatMessageLike[]): number {
  const tally = chatTally(messages);
  return tally.texts.reduce((sum, text) => sum + countTextTokens(text), tally.fixed);
}

/**
 * `exact`: never the upper bound, however long the counting takes (it still gives the loop back between slices).
 * What the built-in models bill must be: a hold counted exactly, then a usage counted by the bound on a busy
 * machine, would charge more than was held.
 */
export interface CountOptions {
  exact?: boolean;
}

export async function countChatInputTokensAsync(
  messages: ChatMessageLike[],
  options: CountOptions = {},
): Promise<number> {
  const tally = chatTally(messages);
  return tally.fixed + (await countAll(tally.texts, options));
}

/** Several texts counted as one request's work: one budget and one pace for all of them. */
export async function countTextsAsync(texts: string[], options: CountOptions = {}): Promise<number[]> {
  const pace = new Pace(options.exact !== true);
  const counts: number[] = [];
  for (const text of texts) counts.push(await countSliced(text, pace));
  return counts;
}

/**
 * Each text counted exactly, as `exact` does, but no further than a limit: undefined as soon as one text is over
 * `perText` or all of them together over `total`, so that the work stops where a model's input limit refuses.
 */
export async function countTextsWithin(
  texts: string[],
  perText: number,
  total: number,
): Promise<number[] | undefined> {
  const pace = new Pace(false);
  const counts: number[] = [];
  let sum = 0;
  for (const text of texts) {
    const count = await countSliced(text, pace, Math.min(perText, total - sum));
    if (count === undefined) return undefined;
    sum += count;
    counts.push(count);
  }
  return counts;
}

async function countAll(texts: string[], options: CountOptions = {}): Promise<number> {
  const counts = await countTextsAsync(texts, options);
  return counts.reduce((sum, count) => sum + count, 0);
}

/**
 * Turns of the event loop are handed out one at a time to every request that is counting: without this, each of
 * N requests counting at once would take its few milliseconds in the same turn, and a turn (so every other
 * request's next step) would wait N times as long.
 */
let turns: Promise<void> = Promise.resolve();

function nextTurn(): Promise<void> {
  const turn = turns.then(() => yieldToLoop());
  turns = turn;
  return turn;
}

/**
 * One request's counting: the loop time it has taken (past COUNT_BUDGET_MS the rest is held at the upper bound),
 * and, since waiting for turns can take long when many count at once, the wall time too (COUNT_WAIT_MS).
 */
class Pace {
  private spent = 0;
  private readonly started = performance.now();
  private since = this.started;

  /** `bounded`: past its budget the rest is held at the upper bound; unbounded, it is always counted. */
  constructor(private readonly bounded: boolean) {}

  get exhausted(): boolean {
    if (!this.bounded) return false;
    const now = performance.now();
    return this.spent + (now - this.since) > COUNT_BUDGET_MS || now - this.started > COUNT_WAIT_MS;
  }

  async breathe(): Promise<void> {
    const ran = performance.now() - this.since;
    if (ran < YIELD_AFTER_MS) return;
    this.spent += ran;
    await nextTurn();
    this.since = performance.now();
  }
}

async function countSliced(text: string, pace: Pace): Promise<number>;
/** With `atMost`: undefined once the count is over it (the rest of the text is not counted). */
async function countSliced(text: string, pace: Pace, atMost: number): Promise<number | undefined>;
async function countSliced(text: string, pace: Pace, atMost = Number.POSITIVE_INFINITY) {
  let total = 0;
  for (let from = 0; from < text.length; ) {
    const to = sliceEnd(text, from);
    const slice = text.slice(from, to);
    total += pace.exhausted ? tokenUpperBound(slice) : countBounded(slice);
    if (total > atMost) return undefined;
    from = to;
    await pace.breathe();
  }
  return total;
}

/** Where a slice starting at `from` ends: before a space that starts a word, so counts match the whole text's. */
function sliceEnd(text: string, from: number): number {
  const limit = from + SLICE_CHARS;
  if (limit >= text.length) return text.length;
  for (let at = limit; at > limit - 256; at--) {
    if (/\s/.test(text[at] as string) && !/\s/.test(text[at - 1] as string)) return at;
  }
  const code = text.charCodeAt(limit);
  return code >= 0xdc00 && code <= 0xdfff ? limit + 1 : limit;
}

function chatTally(messages: unknown): Tally {
  const tally: Tally = { fixed: REPLY_PRIMING_TOKENS, texts: [] };
  if (!Array.isArray(messages)) {
    addUnknown(tally, messages);
    return tally;
  }
  for (const message of messages) {
    tally.fixed += TOKENS_PER_MESSAGE;
    addMessage(tally, message);
  }
  return tally;
}

function addMessage(tally: Tally, message: unknown): void {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    addUnknown(tally, message);
    return;
  }
  // Like the cookbook, every field is counted, so extras such as tool_call_id are not free.
  for (const [key, value] of Object.entries(message)) {
    if (value === undefined || value === null) continue;
    if (key === 'content') addContent(tally, value);
    else if (key === 'name') {
      tally.fixed += TOKENS_PER_NAME;
      addUnknown(tally, value);
    } else addUnknown(tally, value);
  }
}

function addContent(tally: Tally, content: unknown): void {
  if (!Array.isArray(content)) {
    addUnknown(tally, content);
    return;
  }
  for (const part of content) {
    if (typeof part === 'object' && part !== null) {
      const { type, text } = part as { type?: unknown; text?: unknown };
      if (type === 'text' && typeof text === 'string') {
        tally.texts.push(text);
        continue;
      }
      if (type === 'image_url') {
        tally.fixed += IMAGE_TOKENS;
        continue;
      }
    }
    addUnknown(tally, part);
  }
}

function addUnknown(tally: Tally, value: unknown): void {
  tally.texts.push(typeof value === 'string' ? value : safeJson(value));
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    // Circular structures and BigInts cannot come from a JSON body; a rough count beats a throw.
    try {
      return String(value);
    } catch {
      return '';
    }
  }
}

/**
 * The text of the first `maxTokens` tokens, backed off to a whole character and so that it re-counts
 * to at most the limit: a truncated reply never bills more than the caller allowed. Tokenizing stops once
 * past the limit, so a huge text with a small limit costs little.
 */
export function truncateToTokens(
  text: string,
  maxTokens: number,
): { text: string; tokens: number; truncated: boolean } {
  const limit = Number.isNaN(maxTokens) ? 0 : Math.max(0, Math.floor(maxTokens));
  const tokenizer = o200k();
  const tokens: number[] = [];
  let consumed = 0;
  for (const piece of boundedPieces(text)) {
    tokenizer.encode(piece, tokens);
    consumed += piece.length;
    if (tokens.length > limit) break;
  }
  if (consumed === text.length && tokens.length <= limit)
    return { text, tokens: tokens.length, truncated: false };
  // Text re-tokenized can merge differently at the cut, so the prefix is counted again and the cut moved back
  // until it fits (a character spans at most four tokens).
  for (let cut = Math.min(limit, tokens.length); cut > 0; cut--) {
    const prefix = tokenizer.decodeWhole(tokens.slice(0, cut));
    const count = countBounded(prefix);
    if (count <= limit) return { text: prefix, tokens: count, truncated: true };
  }
  return { text: '', tokens: 0, truncated: true };
}
