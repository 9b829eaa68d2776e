import { describe, expect, it } from 'vitest';
import { describeBadInput, MAX_JSON_DEPTH } from '../../src/contracts/input-check.ts';
import { describeOversizedShape, type ShapeLimits } from '../../src/contracts/json-shape.ts';

// The scan reads raw bytes without parsing them, so it is checked against a walk of the parsed value over generated
// texts: strings full of the bytes that mean something outside a string (quotes, escapes, brackets, commas), long
// strings (which it skips with indexOf), multi-byte characters, and white space anywhere white space may go.

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The first limit passed in document order, as the scan words it, from the parsed value. */
function expected(value: Json, limits: ShapeLimits): string | undefined {
  let total = 0;
  const path: (string | number)[] = [];
  const at = () => (path.length ? `'${path.join('.')}'` : 'body');
  const visit = (node: Json, level: number): string | undefined => {
    if (typeof node !== 'object' || node === null) return undefined;
    if (level > MAX_JSON_DEPTH) return `${at()}: nested deeper than ${MAX_JSON_DEPTH} levels`;
    const entries: [string | number, Json][] = Array.isArray(node)
      ? [...node.entries()]
      : Object.entries(node);
    const limit = Array.isArray(node) ? limits.elements : limits.keys;
    for (const [index, [name, child]] of entries.entries()) {
      if (index + 1 > limit) {
        return Array.isArray(node)
          ? `${at()}: more than ${limit} elements in one array; the limit is ${limit}`
          : `${at()}: more than ${limit} keys in one object; the limit is ${limit}`;
      }
      if (++total > limits.values)
        return `body: more than ${limits.values} values in all; the limit is ${limits.values}`;
      path.push(name);
      const found = visit(child, level + 1);
      if (found) return found;
      path.pop();
    }
    return undefined;
  };
  return visit(value, 1);
}

/** A small deterministic generator (mulberry32). */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(items: readonly T[]) => items[Math.floor(next() * items.length)] as T,
  };
}

const PIECES = ['a', '"', '\\', '\\"', '[', ']', '{', '}', ',', ':', ' ', 'é', '字', '😀', '\n', '\u0001'];

function text(r: ReturnType<typeof random>): string {
  const long = r.int(5) === 0 ? 'x'.repeat(60 + r.int(200)) : '';
  return Array.from({ length: r.int(8) }, () => r.pick(PIECES)).join('') + long + r.pick(PIECES);
}

let keySerial = 0;
function value(r: ReturnType<typeof random>, depth: number): Json {
  const kind = depth > 6 ? r.int(3) : r.int(6);
  if (kind === 0) return r.pick([null, true, false, 0, -1.5e10, 12345]);
  if (kind === 1 || kind === 2) return text(r);
  if (kind === 3 || kind === 4) return Array.from({ length: r.int(7) }, () => value(r, depth + 1));
  const object: { [key: string]: Json } = {};
  // Keys that are not integers keep their order in a parsed object, and unique keys are not merged.
  for (let i = r.int(7); i > 0; i--) object[`k${keySerial++}${text(r)}`] = value(r, depth + 1);
  return object;
}

/** JSON with random white space wherever the grammar allows it. */
function serialize(node: Json, r: ReturnType<typeof random>): string {
  const space = () => r.pick(['', '', ' ', '\n  ', '\t', '\r\n']);
  if (typeof node !== 'object' || node === null) return JSON.stringify(node);
  if (Array.isArray(node))
    return `[${space()}${node.map((v) => serialize(v, r) + space()).join(`,${space()}`)}]`;
  const members = Object.entries(node).map(
    ([k, v]) => `${JSON.stringify(k)}${space()}:${space()}${serialize(v, r)}${space()}`,
  );
  return `{${space()}${members.join(`,${space()}`)}}`;
}

describe('the shape scan of a JSON text', () => {
  it('finds the first limit passed, with its path, as a walk of the parsed value does', () => {
    let refused = 0;
    for (let seed = 1; seed <= 3000; seed++) {
      const r = random(seed);
      const root = r.int(2) === 0 ? value(r, 0) : { model: 'm', input: value(r, 1), extra: value(r, 1) };
      const json = serialize(root, r);
      const limits = { keys: 2 + r.int(5), elements: 2 + r.int(5), values: 5 + r.int(60) };
      const want = expected(JSON.parse(json) as Json, limits);
      expect(describeOversizedShape(Buffer.from(json), limits, 'body'), `seed ${seed}: ${json}`).toBe(want);
      if (want) refused++;
    }
    // Both outcomes are exercised.
    expect(refused).toBeGreaterThan(500);
    expect(refused).toBeLessThan(2500);
  });

  it('refuses nesting at the same level and path as the input check', () => {
    const wide = { keys: 10, elements: 10, values: 1000 };
    for (const json of [
      `${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`,
      `${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`,
      `{"a":[1,${'{"b":'.repeat(MAX_JSON_DEPTH)}0${'}'.repeat(MAX_JSON_DEPTH)}]}`,
    ]) {
      expect(describeOversizedShape(Buffer.from(json), wide, 'body')).toBe(
        describeBadInput(JSON.parse(json), 'body'),
      );
    }
  });

  it('leaves a malformed text to the parser, whatever it holds', () => {
    const limits = { keys: 2, elements: 2, values: 10 };
    for (const json of ['{"a":"never closed', '"\\', ']]]}}}', '[1,2', '{"a" 1 "b"}', '', '\\"[[[']) {
      expect(describeOversizedShape(Buffer.from(json), limits, 'body')).toBeUndefined();
    }
  });
});
