/**
 * What a client's text may hold before it reaches a handler. PostgreSQL refuses U+0000 in `text` and `jsonb`, and
 * an unpaired surrogate in `jsonb` ("unsupported Unicode escape sequence"), so such a string would fail the append
 * of its event (and, in a group commit, its neighbours') as a 500. They are refused at the edge instead, as a 400
 * naming the field. Prototype keys and deep nesting are refused here too, in the same single walk.
 */

/** Deeper than any request the API defines (a JSON schema inside a tool is the deepest, a dozen levels or so). */
export const MAX_JSON_DEPTH = 64;

export const UNSTORABLE = 'contains a NUL character or an unpaired surrogate';

interface WellFormed {
  isWellFormed(): boolean;
}

/** True when PostgreSQL cannot store the string as text or JSON. */
export function isUnstorable(text: string): boolean {
  return text.includes('\u0000') || !(text as unknown as WellFormed).isWellFormed();
}

/** A field path as the schema errors write it: `messages.0.content`. */
const joined = (path: readonly (string | number)[]) => path.join('.');

/** The first problem in a parsed JSON value as a request's error says it: `Invalid <where>: '<path>': <reason>`. */
export function findBadInput(value: unknown, where = 'body'): string | undefined {
  const problem = describeBadInput(value, where);
  return problem && `Invalid ${where}: ${problem}`;
}

/**
 * The first problem in a parsed JSON value, as `'<path>': <reason>` (`<where>: <reason>` for the value itself, as
 * in the schema errors), or undefined when it can be stored. Keys are checked like strings; `__proto__` keys, and
 * `constructor` keys holding a `prototype`, are refused as secure-json-parse refuses them.
 */
export function describeBadInput(value: unknown, where: string): string | undefined {
  const path: (string | number)[] = [];
  const at = () => (path.length ? `'${joined(path)}'` : where);
  const visit = (node: unknown, depth: number): string | undefined => {
    if (typeof node === 'string') return isUnstorable(node) ? `${at()}: ${UNSTORABLE}` : undefined;
    if (typeof node !== 'object' || node === null) return undefined;
    if (depth >= MAX_JSON_DEPTH) return `${at()}: nested deeper than ${MAX_JSON_DEPTH} levels`;
    if (Array.isArray(node)) {
      for (let index = 0; index < node.length; index++) {
        path.push(index);
        const found = visit(node[index], depth + 1);
        if (found) return found;
        path.pop();
      }
      return undefined;
    }
    for (const key of Object.keys(node)) {
      if (isUnstorable(key)) return `${at()}: a key ${UNSTORABLE}`;
      path.push(key);
      if (key === '__proto__') return `${at()}: not accepted as a key`;
      const child = (node as Record<string, unknown>)[key];
      if (key === 'constructor' && typeof child === 'object' && child !== null && 'prototype' in child) {
        return `${at()}: a 'constructor' holding a 'prototype' is not accepted`;
      }
      const found = visit(child, depth + 1);
      if (found) return found;
      path.pop();
    }
    return undefined;
  };
  return visit(value, 0);
}
