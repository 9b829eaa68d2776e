/**
 * Text an event may not carry. PostgreSQL refuses U+0000 in `text` and `jsonb` ("unsupported Unicode escape
 * sequence"), and half of a surrogate pair has no UTF-8 form at all, so neither the event store nor the read
 * models could keep it. Events are checked before they are appended (commands/stream-writer.ts).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding U+0000 is the point.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/** What makes a string unstorable, in words; undefined when it is storable. */
export function unstorableCharacter(text: string): string | undefined {
  const found = UNSTORABLE.exec(text)?.[0];
  if (found === undefined) return undefined;
  if (found === '\u0000') return 'a NUL character (U+0000)';
  return `an unpaired surrogate (U+${found.charCodeAt(0).toString(16).toUpperCase()})`;
}

export interface UnstorableText {
  /** Where the text sits, as `reference`, `metadata.note` or `items.2.text`; '' for the value itself. */
  path: string;
  what: string;
}

/** The first string or object key (depth first) that cannot be stored, or undefined when all can. */
export function findUnstorableText(value: unknown, path = ''): UnstorableText | undefined {
  if (typeof value === 'string') {
    const what = unstorableCharacter(value);
    return what === undefined ? undefined : { path, what };
  }
  if (value === null || typeof value !== 'object' || value instanceof Date) return undefined;
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  for (const [key, inner] of entries) {
    const at = path === '' ? key : `${path}.${key}`;
    const what = unstorableCharacter(key);
    if (what !== undefined) return { path: at, what: `${what} in its name` };
    const found = findUnstorableText(inner, at);
    if (found) return found;
  }
  return undefined;
}

/**
 * The text with each NUL and unpaired surrogate replaced by U+FFFD, for text that comes from elsewhere (an
 * upstream's error message, a file) and is recorded as a fact rather than refused.
 */
export function storableText(text: string): string {
  return UNSTORABLE.test(text) ? text.replace(UNSTORABLE_ALL, '\ufffd') : text;
}
