import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { o200k, o200kRanks } from '../../src/tokens/bpe.ts';

const require = createRequire(import.meta.url);

describe('the o200k rank table read from the .tiktoken file', () => {
  it('is the table the package ships as JavaScript, rank for rank', () => {
    const shipped = require('gpt-tokenizer/bpeRanks/o200k_base').default as (string | number[])[];
    const read = o200kRanks();
    expect(read.length).toBe(shipped.length);
    const differing = read.flatMap((token, rank) =>
      JSON.stringify(token) === JSON.stringify(shipped[rank]) ? [] : [rank],
    );
    expect(differing).toEqual([]);
    // Both kinds of entry are there: text tokens and tokens that are not valid UTF-8 on their own.
    expect(read.some((token) => Array.isArray(token))).toBe(true);
  });

  it('counts and encodes as the package does', () => {
    const shipped = require('gpt-tokenizer/encoding/o200k_base') as {
      encode(text: string, options?: { disallowedSpecial: Set<string> }): number[];
    };
    const texts = [
      'hello world',
      'Привет, мир! 你好，世界。 مرحبا بالعالم',
      'emoji 🤖🧠 and <|endoftext|> as text',
      '    indented\n\tcode() { return 42; }',
      'a'.repeat(64),
    ];
    for (const text of texts) {
      const ours = o200k().encode(text, { disallowedSpecial: new Set() });
      expect(ours).toEqual(shipped.encode(text, { disallowedSpecial: new Set() }));
      expect(o200k().decode(ours)).toBe(text);
    }
  });
});
