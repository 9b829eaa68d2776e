import { encodeChat } from 'gpt-tokenizer/model/gpt-4o';
import { describe, expect, it, vi } from 'vitest';
import { echoChat } from '../../src/providers/local/echo.ts';
import {
  countChatInputTokens,
  countChatInputTokensAsync,
  countTextTokens,
  countTextTokensAsync,
  IMAGE_TOKENS,
  truncateToTokens,
} from '../../src/tokens/count.ts';

describe('countTextTokens (o200k_base)', () => {
  it('matches known o200k counts', () => {
    expect(countTextTokens('')).toBe(0);
    expect(countTextTokens('hello world')).toBe(2);
    expect(countTextTokens('Hello, world!')).toBe(4);
    expect(countTextTokens('The quick brown fox jumps over the lazy dog.')).toBe(10);
  });

  it('grows with the text', () => {
    const one = countTextTokens('lorem ipsum dolor sit amet ');
    expect(countTextTokens('lorem ipsum dolor sit amet '.repeat(10))).toBeGreaterThan(one * 5);
  });

  it('counts special-token strings as plain text instead of throwing', () => {
    expect(countTextTokens('a <|endoftext|> b')).toBeGreaterThan(3);
    expect(countTextTokens('<|im_start|>system')).toBeGreaterThan(1);
  });

  it('copes with non-BMP and ill-formed strings', () => {
    expect(countTextTokens('👋🏽 漢字 𝔘𝔫𝔦')).toBeGreaterThan(0);
    expect(countTextTokens('\ud800 lone surrogate')).toBeGreaterThan(0);
  });
});

describe('countChatInputTokens', () => {
  it('adds 3 per message, the role and 3 for reply priming', () => {
    // 3 framing + 1 'user' + 2 'hello world' + 3 priming
    expect(countChatInputTokens([{ role: 'user', content: 'hello world' }])).toBe(9);
    expect(countChatInputTokens([])).toBe(3);
  });

  it('agrees with the ChatML encoding of gpt-4o for plain chats', () => {
    const chat = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'What is 2 + 2?' },
      { role: 'assistant', content: '4.' },
      { role: 'user', content: 'And 3 + 3?' },
    ] as const;
    expect(countChatInputTokens([...chat])).toBe(encodeChat([...chat]).length);
  });

  it('charges a name its tokens plus one', () => {
    const plain = countChatInputTokens([{ role: 'user', content: 'hi' }]);
    expect(countChatInputTokens([{ role: 'user', content: 'hi', name: 'bob' }])).toBe(
      plain + 1 + countTextTokens('bob'),
    );
  });

  it('counts text parts like strings and each image as a fixed amount', () => {
    const asString = countChatInputTokens([{ role: 'user', content: 'hello world' }]);
    const asParts = countChatInputTokens([
      { role: 'user', content: [{ type: 'text', text: 'hello world' }] },
    ]);
    expect(asParts).toBe(asString);
    const image = { type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(50_000)}` } };
    expect(
      countChatInputTokens([
        { role: 'user', content: [{ type: 'text', text: 'hello world' }, image, image] },
      ]),
    ).toBe(asString + 2 * IMAGE_TOKENS);
  });

  it('counts unknown parts and tool calls by their JSON', () => {
    const audio = { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } };
    expect(countChatInputTokens([{ role: 'user', content: [audio] }])).toBe(
      3 + 1 + countTextTokens(JSON.stringify(audio)) + 3,
    );
    const toolCalls = [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }];
    expect(countChatInputTokens([{ role: 'assistant', content: null, tool_calls: toolCalls }])).toBe(
      3 + 1 + countTextTokens(JSON.stringify(toolCalls)) + 3,
    );
  });

  it('never throws on odd shapes', () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const odd = [
      null,
      undefined,
      42,
      'just a string',
      [],
      {},
      { role: 7, content: { nested: true } },
      { role: 'user', content: [null, 1, 'x', { type: 'text', text: 5 }, { type: 'image_url' }] },
      { role: 'user', content: circular },
      { role: 'user', content: 10n },
      { role: 'user', name: { not: 'a string' }, tool_calls: 'nonsense' },
    ];
    for (const message of odd) {
      expect(countChatInputTokens([message as never])).toBeGreaterThanOrEqual(3);
    }
    expect(countChatInputTokens(odd as never)).toBeGreaterThan(3 * odd.length);
    for (const messages of [null, undefined, 'x', { role: 'user' }]) {
      expect(countChatInputTokens(messages as never)).toBeGreaterThanOrEqual(3);
    }
  });
});

describe('truncateToTokens', () => {
  it('keeps text within the limit untouched', () => {
    expect(truncateToTokens('hello world', 2)).toEqual({ text: 'hello world', tokens: 2, truncated: false });
  });

  it('cuts at token boundaries', () => {
    expect(truncateToTokens('hello world', 1)).toEqual({ text: 'hello', tokens: 1, truncated: true });
    expect(truncateToTokens('hello world', 0)).toEqual({ text: '', tokens: 0, truncated: true });
  });

  it('never splits a character or re-counts above the limit', () => {
    const text = '👋🏽👋🏽 漢字テスト 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 🧑‍🤝‍🧑 ok';
    for (let limit = 0; limit <= countTextTokens(text); limit++) {
      const cut = truncateToTokens(text, limit);
      expect(text.startsWith(cut.text)).toBe(true);
      expect(cut.tokens).toBe(countTextTokens(cut.text));
      expect(cut.tokens).toBeLessThanOrEqual(limit);
    }
  });
});

describe('counting huge inputs without holding the event loop', () => {
  const cjk = (n: number) =>
    Array.from({ length: n }, (_, i) => String.fromCodePoint(0x4e00 + ((i * 7919) % 20_000))).join('');

  it('gives the loop back while counting a large text', async () => {
    const order: string[] = [];
    setImmediate(() => order.push('other work'));
    await countTextTokensAsync('a'.repeat(300_000)).then(() => order.push('counted'));
    expect(order).toEqual(['other work', 'counted']);
  });

  it('counts long runs without spaces in linear time, within the byte bound', async () => {
    // Quadratic before runs were split: 400k of `a` took minutes and 100k CJK characters 18 s.
    for (const text of ['a'.repeat(400_000), cjk(100_000), ' '.repeat(200_000), 'A'.repeat(50_000) + 'b']) {
      const counted = await countTextTokensAsync(text);
      expect(counted).toBeGreaterThan(0);
      expect(counted).toBeLessThanOrEqual(Buffer.byteLength(text));
    }
    expect(
      await countChatInputTokensAsync([
        { role: 'user', content: [{ type: 'text', text: 'a'.repeat(400_000) }] },
      ]),
    ).toBeGreaterThan(40_000);
  });

  it('agrees with the plain count on ordinary text', async () => {
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(2_000);
    expect(await countTextTokensAsync(text)).toBe(encodeChat([{ role: 'user', content: text }]).length - 7);
    expect(await countTextTokensAsync('hello world')).toBe(countTextTokens('hello world'));
  });

  it('answers a synchronous caller with the byte bound past a few thousand characters', () => {
    const text = 'word '.repeat(10_000);
    expect(countTextTokens(text)).toBe(Buffer.byteLength(text));
  });

  it('truncates a huge reply by tokenizing only what it keeps', () => {
    const cut = truncateToTokens('a'.repeat(2_000_000), 100);
    expect(cut).toMatchObject({ tokens: 100, truncated: true });
    expect(cut.text).toBe('a'.repeat(cut.text.length));
  });
});

describe('the built-in models count exactly on a busy machine', () => {
  // The money fault test saw overruns under load: the hold counted the prompt exactly, then the local model, its
  // counting budget used up by a busy loop, billed the byte bound for the rest.
  it('bills the exact count however long counting takes, while the gateway falls back to the bound', async () => {
    const messages = [{ role: 'user', content: 'w1 w2 w3 '.repeat(20_000) }];
    const exact = await countChatInputTokensAsync(messages);
    // Every reading of the clock a second later: each count is past its budget after its first slice.
    let now = performance.now();
    const clock = vi.spyOn(performance, 'now').mockImplementation(() => {
      now += 1000;
      return now;
    });
    try {
      expect(await countChatInputTokensAsync(messages)).toBeGreaterThan(exact);
      const echoed = await echoChat({ messages, maxTokens: 5 });
      expect(echoed.usage.promptTokens).toBe(exact);
    } finally {
      clock.mockRestore();
    }
  });
});
