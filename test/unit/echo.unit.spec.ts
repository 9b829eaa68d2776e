import { describe, expect, it } from 'vitest';
import { echoChat, echoChunks } from '../../src/providers/local/echo.ts';
import { countChatInputTokens, countTextTokens } from '../../src/tokens/count.ts';

const conversation = [
  { role: 'system', content: 'Be helpful.' },
  { role: 'user', content: 'first question' },
  { role: 'assistant', content: 'first answer' },
  { role: 'user', content: 'The quick brown fox jumps over the lazy dog.' },
];

describe('echoChat', () => {
  it('echoes the last user message and reports usage', async () => {
    const result = await echoChat({ messages: conversation, maxTokens: 100 });
    expect(result).toEqual({
      content: 'The quick brown fox jumps over the lazy dog.',
      finishReason: 'stop',
      usage: { promptTokens: countChatInputTokens(conversation), completionTokens: 10 },
    });
  });

  it('joins text parts with newlines and ignores the rest', async () => {
    const messages = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look at' },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
          { type: 'text', text: 'this' },
        ],
      },
      { role: 'assistant', content: 'ok' },
    ];
    expect((await echoChat({ messages, maxTokens: 100 })).content).toBe('look at\nthis');
  });

  it('replies with nothing when there is no user message', async () => {
    const result = await echoChat({ messages: [{ role: 'system', content: 'x' }], maxTokens: 10 });
    expect(result.content).toBe('');
    expect(result.finishReason).toBe('stop');
    expect(result.usage.completionTokens).toBe(0);
    expect((await echoChat({ messages: [], maxTokens: 10 })).usage.promptTokens).toBe(3);
  });

  it('truncates to maxTokens and says so', async () => {
    const result = await echoChat({ messages: conversation, maxTokens: 4 });
    expect(result.content).toBe('The quick brown fox');
    expect(result.finishReason).toBe('length');
    expect(result.usage.completionTokens).toBe(4);
  });

  it('stops exactly at the limit without calling it a truncation', async () => {
    const result = await echoChat({ messages: conversation, maxTokens: 10 });
    expect(result.finishReason).toBe('stop');
    expect(result.usage.completionTokens).toBe(10);
  });

  it('handles a zero budget', async () => {
    const result = await echoChat({ messages: conversation, maxTokens: 0 });
    expect(result).toMatchObject({ content: '', finishReason: 'length', usage: { completionTokens: 0 } });
  });

  it('keeps completion tokens within budget for multi-token characters', async () => {
    const messages = [{ role: 'user', content: '👋🏽 hello 漢字テスト 𝔘𝔫𝔦𝔠𝔬𝔡𝔢' }];
    for (let maxTokens = 0; maxTokens < 20; maxTokens++) {
      const result = await echoChat({ messages, maxTokens });
      expect(result.usage.completionTokens).toBeLessThanOrEqual(maxTokens);
      expect(result.usage.completionTokens).toBe(countTextTokens(result.content));
      expect(result.content).not.toContain('\uFFFD');
    }
  });

  it('is deterministic', async () => {
    const a = await echoChat({ messages: conversation, maxTokens: 5 });
    const b = await echoChat({ messages: structuredClone(conversation), maxTokens: 5 });
    expect(b).toEqual(a);
    expect([...echoChunks(b)]).toEqual([...echoChunks(a)]);
  });
});

describe('echoChunks', () => {
  const deltas = (content: string) => [
    ...echoChunks({ content, finishReason: 'stop', usage: { promptTokens: 0, completionTokens: 0 } }),
  ];

  it('yields one word with its trailing whitespace at a time', async () => {
    expect(deltas('The quick  brown\nfox ')).toEqual(['The ', 'quick  ', 'brown\n', 'fox ']);
  });

  it('concatenates back to the content exactly', async () => {
    for (const content of ['', '   ', '  leading', 'trailing\n\n', 'a\tb\r\nc', '👋🏽 漢字 𝔘𝔫𝔦 ok']) {
      expect(deltas(content).join('')).toBe(content);
    }
    expect(deltas('')).toEqual([]);
  });

  it('streams a real echo result', async () => {
    const result = await echoChat({ messages: conversation, maxTokens: 100 });
    const chunks = [...echoChunks(result)];
    expect(chunks).toHaveLength(9);
    expect(chunks.join('')).toBe(result.content);
  });
});
