import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { o200k } from '../../src/tokens/bpe.ts';

const require = createRequire(import.meta.url);

// The package's own o200k encoder, built from the table it ships as JavaScript: the reference ours must match.
const shipped = require('gpt-tokenizer/encoding/o200k_base') as {
  encode(text: string, options?: { disallowedSpecial: Set<string> }): number[];
};
const asText = { disallowedSpecial: new Set<string>() };

describe('the packed o200k table read from the .tiktoken file', () => {
  it('holds the table the package ships as JavaScript, rank for rank', () => {
    const ranks = require('gpt-tokenizer/bpeRanks/o200k_base').default as (string | number[])[];
    const { table } = o200k();
    expect(table.size).toBe(ranks.length);
    const differing: number[] = [];
    ranks.forEach((token, rank) => {
      const expected = typeof token === 'string' ? Buffer.from(token, 'utf8') : Buffer.from(token);
      const bytes = table.tokenBytes(rank);
      if (!expected.equals(bytes) || table.rankOf(bytes, 0, bytes.length) !== rank) differing.push(rank);
    });
    expect(differing).toEqual([]);
    // Both kinds of entry are there: text tokens and tokens that are not valid UTF-8 on their own.
    expect(ranks.some((token) => Array.isArray(token))).toBe(true);
    expect(table.rankOf(Buffer.from('no such token, surely'), 0, 21)).toBe(-1);
  });
});

describe('the o200k encoder', () => {
  it('encodes and counts as the package does', () => {
    const texts = [
      'hello world',
      'Привет, мир! 你好，世界。 مرحبا بالعالم',
      'emoji 🤖🧠 and <|endoftext|> as text',
      '    indented\n\tcode() { return 42; }\r\n\r\n',
      "They'll say it's HE'LL and WE'RE, 1234567 times.",
      'a'.repeat(64),
      '\ud800 lone surrogates \udfff',
      readFileSync(new URL('../../docs/performance.md', import.meta.url), 'utf8'),
      readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
      ...randomTexts(2_000),
    ];
    const tokenizer = o200k();
    for (const text of texts) {
      const expected = shipped.encode(text, asText);
      expect(tokenizer.encode(text), JSON.stringify(text.slice(0, 200))).toEqual(expected);
      expect(tokenizer.count(text)).toBe(expected.length);
    }
  });

  it('decodes tokens back to the text, holding back a character the last token leaves incomplete', () => {
    const tokenizer = o200k();
    const text = 'naïve café, 你好 🤖';
    const tokens = tokenizer.encode(text);
    expect(tokenizer.decodeWhole(tokens)).toBe(text);
    for (let cut = 0; cut <= tokens.length; cut++) {
      const prefix = tokenizer.decodeWhole(tokens.slice(0, cut));
      expect(text.startsWith(prefix)).toBe(true);
      expect(prefix).not.toContain('\ufffd');
    }
  });
});

/** Strings drawn from many scripts and character classes, the same every run. */
function randomTexts(count: number): string[] {
  const pools = [
    'abcdefghijklmnopqrstuvwxyz',
    'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
    '0123456789',
    ' \t\n\r  .,;:!?\'"()[]{}<>/\\|-_=+*&^%$#@~`',
    'абвгдежзийклмнопрстуфхцчшщъыьэюяЖЩ',
    '的一是不了人我在有他这为之大来以个中上们',
    'ابتثجحخدذرزسشصضطظعغفقكلمنهوي',
    'αβγδεζηθικλμνξοπρστυφχψω',
    'éèêëàâäôöûüçñß',
    '\u0301\u0308\u200d\ufe0f',
    '🤖🧠👋🏽🎉🇫🇷𝔘𝔫𝔦',
    "'s 're 've 'll 'd 'm 't ",
  ];
  let seed = 42;
  const next = (bound: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % bound;
  };
  const texts: string[] = [];
  for (let t = 0; t < count; t++) {
    let text = '';
    const length = 1 + next(120);
    while (text.length < length) {
      const pool = [...(pools[next(pools.length)] as string)];
      const run = 1 + next(8);
      for (let i = 0; i < run; i++) text += pool[next(pool.length)];
    }
    texts.push(text);
  }
  return texts;
}
