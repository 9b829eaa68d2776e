/**
 * The shape of a JSON text, bounded before anything parses it. Parsing, the input check, the schemas and every copy
 * cost time in proportion to the number of values, and a wide object (whose keys each cost a hash-table entry) costs
 * most: a 6 MB body of 500,000 keys took seconds of the event loop, and so of every other tenant's requests, before
 * the hold could refuse it. This scan reads the raw bytes once, counting the members of each object, the elements of
 * each array, all of them together and the nesting, and stops at the first limit passed; it allocates nothing per
 * value, and skips a string's bytes with `indexOf`. It judges no syntax: a malformed text is left for `JSON.parse`
 * to refuse, with its own reason.
 */

import { MAX_JSON_DEPTH } from './input-check.ts';

export interface ShapeLimits {
  /** Members of one object. */
  keys: number;
  /** Elements of one array. */
  elements: number;
  /** Members and elements of every object and array of the text, together. */
  values: number;
}

/**
 * What a request body (or a batch line) may hold. The API's largest arrays are 2,048 embedding inputs, 1,000 rerank
 * documents or eval items and a conversation's messages (a few thousand in 10 MiB of real content); its widest
 * objects a tool's JSON schema, `logit_bias` (300 keys) and `metadata` (16); its most values a long agent session
 * (~25,000 in a 1M-token one) or an eval of 1,000 multi-turn items. The total is what bounds the work of every later
 * pass over an admitted body (the parse, the input check, the schema, the request log, the cache key): measured at
 * 1.5-2 µs a value when the values are keys of wide objects, the costliest kind.
 */
export const BODY_SHAPE_LIMITS: ShapeLimits = { keys: 10_000, elements: 50_000, values: 100_000 };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
/** Short strings are cheaper to walk than to hand to `indexOf`; long ones are far cheaper to hand. */
const WALKED = 64;

/**
 * The first limit the JSON text passes, as `'<path>': <reason>` (`<where>: <reason>` for the top-level value, as
 * the schema errors write it), or undefined when it passes none. The path is the container's own: `'input'` for an
 * over-long `input` array, `'metadata'` for an over-wide `metadata` object.
 */
export function describeOversizedShape(
  bytes: Buffer,
  limits: ShapeLimits,
  where: string,
): string | undefined {
  // Per open container (1-based; 0 is outside any): its count so far, whether it is an object, and where the key
  // of its current member starts and ends (a path is only decoded when a limit is passed).
  const counts = new Int32Array(MAX_JSON_DEPTH + 1);
  const objects = new Uint8Array(MAX_JSON_DEPTH + 1);
  const keyStarts = new Int32Array(MAX_JSON_DEPTH + 1);
  const keyEnds = new Int32Array(MAX_JSON_DEPTH + 1);
  let depth = 0;
  let total = 0;
  // A member or element begins at the next byte that is not white space (after `{`, `[` or `,`).
  let due = false;
  const at = (levels: number) => pathOf(bytes, levels, objects, counts, keyStarts, keyEnds, where);

  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i] as number;
    if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) continue;
    if (due) {
      due = false;
      if (byte !== CLOSE_OBJECT && byte !== CLOSE_ARRAY) {
        const count = (counts[depth] as number) + 1;
        counts[depth] = count;
        const object = objects[depth] === 1;
        if (object && count > limits.keys) {
          return `${at(depth)}: more than ${limits.keys} keys in one object; the limit is ${limits.keys}`;
        }
        if (!object && count > limits.elements) {
          return `${at(depth)}: more than ${limits.elements} elements in one array; the limit is ${limits.elements}`;
        }
        if (++total > limits.values) {
          return `${where}: more than ${limits.values} values in all; the limit is ${limits.values}`;
        }
        if (object && byte === QUOTE) {
          const end = closingQuote(bytes, i);
          if (end < 0) return undefined;
          keyStarts[depth] = i;
          keyEnds[depth] = end;
          i = end;
          continue;
        }
      }
    }
    switch (byte) {
      case QUOTE: {
        const end = closingQuote(bytes, i);
        if (end < 0) return undefined;
        i = end;
        break;
      }
      case OPEN_OBJECT:
      case OPEN_ARRAY:
        if (depth === MAX_JSON_DEPTH) return `${at(depth + 1)}: nested deeper than ${MAX_JSON_DEPTH} levels`;
        depth++;
        counts[depth] = 0;
        objects[depth] = byte === OPEN_OBJECT ? 1 : 0;
        due = true;
        break;
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        if (depth > 0) depth--;
        break;
      case COMMA:
        if (depth > 0) due = true;
        break;
      default:
        break;
    }
  }
  return undefined;
}

/** The index of the quote that ends the string opened at `open`, or -1 when it is never closed. */
function closingQuote(bytes: Buffer, open: number): number {
  let at = open + 1;
  for (;;) {
    const walked = Math.min(bytes.length, at + WALKED);
    for (; at < walked; at++) {
      const byte = bytes[at];
      if (byte === BACKSLASH) at++;
      else if (byte === QUOTE) return at;
    }
    if (at >= bytes.length) return -1;
    // `at` begins a character (not the second byte of an escape), so the backslashes right before the next quote
    // down to `at` or to another character say alone whether that quote is escaped.
    const quote = bytes.indexOf(QUOTE, at);
    if (quote < 0) return -1;
    let before = quote - 1;
    while (before >= at && bytes[before] === BACKSLASH) before--;
    if ((quote - 1 - before) % 2 === 0) return quote;
    at = quote + 1;
  }
}

/** The path to the container opened at `level` (1 is the top-level value), as the schema errors write it. */
function pathOf(
  bytes: Buffer,
  level: number,
  objects: Uint8Array,
  counts: Int32Array,
  keyStarts: Int32Array,
  keyEnds: Int32Array,
  where: string,
): string {
  const parts: (string | number)[] = [];
  for (let outer = 1; outer < level; outer++) {
    parts.push(
      objects[outer] === 1
        ? keyText(bytes, keyStarts[outer] as number, keyEnds[outer] as number)
        : (counts[outer] as number) - 1,
    );
  }
  return parts.length ? `'${parts.join('.')}'` : where;
}

function keyText(bytes: Buffer, start: number, end: number): string {
  const literal = bytes.toString('utf8', start, end + 1);
  try {
    return JSON.parse(literal) as string;
  } catch {
    return literal.slice(1, -1);
  }
}
