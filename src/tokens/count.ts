import { createRequire } from 'node:module';
import type * as O200kBase from 'gpt-tokenizer/encoding/o200k_base';

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

// The o200k rank table is ~2.4 MB of JS and takes ~200 ms to evaluate, so it is required on first
// use rather than imported: processes that never count tokens (CLI, migrations) never pay for it.
const require = createRequire(import.meta.url);
let encoder: typeof O200kBase | undefined;

function o200k(): typeof O200kBase {
  encoder ??= require('gpt-tokenizer/encoding/o200k_base') as typeof O200kBase;
  return encoder;
}

// The API treats '<|endoftext|>' and friends in user text as plain text; the library's default
// would throw on them instead.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

export function countTextTokens(text: string): number {
  if (typeof text !== 'string') return countTextTokens(safeJson(text));
  return text === '' ? 0 : o200k().countTokens(text, PLAIN_TEXT);
}

export function countChatInputTokens(messages: ChatMessageLike[]): number {
  if (!Array.isArray(messages)) return REPLY_PRIMING_TOKENS + countUnknown(messages);
  let total = REPLY_PRIMING_TOKENS;
  for (const message of messages) total += TOKENS_PER_MESSAGE + countMessage(message);
  return total;
}

function countMessage(message: unknown): number {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return countUnknown(message);
  let total = 0;
  // Like the cookbook, every field is counted, so extras such as tool_call_id are not free.
  for (const [key, value] of Object.entries(message)) {
    if (value === undefined || value === null) continue;
    if (key === 'content') total += countContent(value);
    else if (key === 'name') total += TOKENS_PER_NAME + countUnknown(value);
    else total += countUnknown(value);
  }
  return total;
}

function countContent(content: unknown): number {
  if (!Array.isArray(content)) return countUnknown(content);
  let total = 0;
  for (const part of content) total += countPart(part);
  return total;
}

function countPart(part: unknown): number {
  if (typeof part === 'object' && part !== null) {
    const { type, text } = part as { type?: unknown; text?: unknown };
    if (type === 'text' && typeof text === 'string') return countTextTokens(text);
    if (type === 'image_url') return IMAGE_TOKENS;
  }
  return countUnknown(part);
}

function countUnknown(value: unknown): number {
  return countTextTokens(typeof value === 'string' ? value : safeJson(value));
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
 * to at most the limit: a truncated reply never bills more than the caller allowed.
 */
export function truncateToTokens(
  text: string,
  maxTokens: number,
): { text: string; tokens: number; truncated: boolean } {
  const limit = Number.isNaN(maxTokens) ? 0 : Math.max(0, Math.floor(maxTokens));
  const { encode, decode } = o200k();
  const tokens = encode(text, PLAIN_TEXT);
  if (tokens.length <= limit) return { text, tokens: tokens.length, truncated: false };
  // gpt-tokenizer 4.0 decodes through one shared streaming TextDecoder that is never flushed, so
  // decoding a prefix that ends inside a character leaks its stray bytes into the next decode as
  // U+FFFD. Decoding the remainder instead always ends cleanly; a cut inside a character shows up
  // as a remainder that is not a suffix of the whole, and we back off (a code point spans at most
  // four tokens).
  const whole = decode(tokens);
  for (let cut = limit; cut > 0; cut--) {
    const rest = decode(tokens.slice(cut));
    if (!whole.endsWith(rest)) continue;
    const prefix = whole.slice(0, whole.length - rest.length);
    const count = countTextTokens(prefix);
    if (count <= limit) return { text: prefix, tokens: count, truncated: true };
  }
  return { text: '', tokens: 0, truncated: true };
}
