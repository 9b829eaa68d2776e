import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { startAnthropicUpstream } from '../upstreams/anthropic.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

let openai: Upstream;
let anthropic: Upstream;
let gateway: TestGateway;
let key: string;
let client: OpenAI;

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startOpenAiUpstream(), startAnthropicUpstream()]);
  // Keys and fallbacks from the config file, as an operator may prefer to environment variables.
  const file = join(tmpdir(), `gw-config-${process.pid}-${Date.now()}.json`);
  await writeFile(
    file,
    JSON.stringify({
      providers: {
        openai: { api_key: 'sk-from-file', base_url: `${openai.url}/v1` },
        anthropic: { api_key: 'sk-from-file', base_url: anthropic.url },
      },
      fallbacks: { 'openai/gpt-4o-mini': ['anthropic/claude-sonnet-4-5'] },
    }),
  );
  gateway = await startTestGateway({ GATEWAY_CONFIG: file, GATEWAY_UPSTREAM_TIMEOUT_MS: '2000' });
  const account = await json(await gateway.admin('/accounts', { name: 'streams' }));
  key = account.key;
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'funding' });
  client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.close();
  await Promise.all([openai?.close(), anthropic?.close()]);
});

const charges = (requestId: string | null) =>
  gateway.runtime.database.pool.query<{
    model: string;
    usage_reported: boolean;
    lines: { item: string; quantity: number }[];
  }>('SELECT model, usage_reported, lines FROM charges WHERE request_id = $1', [requestId]);

describe('streams', () => {
  it('forwards chunks as they arrive, not all at the end', async () => {
    openai.script({ kind: 'ok', chunkDelayMs: 80 });
    const stream = await client.chat.completions.create({
      model: 'openai/gpt-4o-mini',
      stream: true,
      messages: [{ role: 'user', content: 'one two three four five six' }],
    });
    const arrivals: number[] = [];
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) arrivals.push(Date.now());
    expect(arrivals.length).toBeGreaterThan(3);
    expect((arrivals.at(-1) as number) - (arrivals[0] as number)).toBeGreaterThan(150);
  });

  it('bills a client that walks away for what was produced, saying the usage was estimated', async () => {
    openai.script({ kind: 'ok', chunkDelayMs: 60 });
    const controller = new AbortController();
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'openai/gpt-4o-mini',
        stream: true,
        messages: [{ role: 'user', content: Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ') }],
      }),
      signal: controller.signal,
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let seen = '';
    while (!seen.includes('word2')) seen += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    const rows = await eventually(
      async () => (await charges(response.headers.get('x-request-id'))).rows,
      (r) => r.length === 1,
      5000,
    );
    expect(rows[0]?.usage_reported).toBe(false);
    const output = rows[0]?.lines.find((l) => l.item === 'output_tokens')?.quantity ?? 0;
    expect(output).toBeGreaterThan(0);
    expect(output).toBeLessThan(40);
  });

  it('ends a stream the provider drops with an error chunk, after what it had sent', async () => {
    openai.script({ kind: 'disconnect_mid_stream', afterChunks: 3 });
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'openai/gpt-4o-mini',
        stream: true,
        messages: [{ role: 'user', content: 'a b c d e f g h' }],
      }),
    });
    const text = await response.text();
    const events = text
      .split('\n\n')
      .filter((e) => e.startsWith('data: '))
      .map((e) => e.slice(6));
    expect(events.at(-1)).toBe('[DONE]');
    const error = JSON.parse(events.at(-2) as string);
    expect(error.error).toMatchObject({ type: 'provider_error', code: 502 });
    expect(events.length).toBeGreaterThan(3);
  });

  it('waits for a slow first byte within the timeout', async () => {
    openai.script({ kind: 'slow_first_byte', ms: 500 });
    const data = await client.chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'slow' }],
    });
    expect(data.choices[0]?.message.content).toBe('echo: slow');
  });

  it.each([
    ['OpenAI', 'openai/gpt-4o-mini', () => openai],
    ['Anthropic', 'anthropic/claude-sonnet-4-5', () => anthropic],
  ])(
    "keeps %s's connection for the next call when the body ends after its last event",
    async (_, model, upstream) => {
      // A new question each time: a repeated one would be answered from the cache.
      const stream = async (round: number) => {
        upstream().script({ kind: 'ok', endDelayMs: 20 });
        const chunks = await client.chat.completions.create({
          model,
          stream: true,
          messages: [{ role: 'user', content: `round ${round}` }],
        });
        for await (const _chunk of chunks);
        // The answer ends at the last event; the connection is free again once the provider's body has ended.
        await new Promise((resolve) => setTimeout(resolve, 100));
      };
      await stream(0);
      const before = upstream().connections?.() as number;
      const requests = upstream().requests.length;
      for (let round = 1; round <= 4; round++) await stream(round);
      expect(upstream().requests.length).toBe(requests + 4);
      expect(upstream().connections?.()).toBe(before);
    },
  );

  it('ends the answer at the last event when the provider never ends its body', async () => {
    openai.script({ kind: 'ok', endDelayMs: 60_000 });
    const chunks = await client.chat.completions.create({
      model: 'openai/gpt-4o-mini',
      stream: true,
      messages: [{ role: 'user', content: 'held open' }],
    });
    let text = '';
    for await (const chunk of chunks) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('echo: held open');
  });
});

describe('configured fallbacks', () => {
  it('falls back along the model’s configured list when the request names none', async () => {
    openai.script({ kind: 'error', status: 502 });
    const { data, response } = await client.chat.completions
      .create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'configured' }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe('echo: configured');
    expect(response.headers.get('x-model')).toBe('anthropic/claude-sonnet-4-5');
    expect(openai.requests.at(-1)?.headers.authorization).toBe('Bearer sk-from-file');
  });
});
