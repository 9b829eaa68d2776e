import { randomBytes } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { startAnthropicUpstream } from '../upstreams/anthropic.ts';
import { vector } from '../upstreams/modality-model.ts';
import { startOpenAiModalitiesUpstream } from '../upstreams/openai-modalities.ts';
import type { Upstream } from '../upstreams/types.ts';

// /v1/messages (translated on local/echo, native on the Anthropic simulator) and /v1/embeddings: every endpoint the
// cache serves says so in its headers, and its hits come back in the endpoint's own format.
let anthropicSim: Upstream;
let embeddingsSim: Upstream;
let gateway: TestGateway;
let key: string;
let openai: OpenAI;
let anthropic: Anthropic;

const fresh = (text: string) => `${text} ${randomBytes(4).toString('hex')}`;
const upstreamMessages = () => anthropicSim.requests.filter((r) => r.path === '/v1/messages').length;
const upstreamEmbeddings = () => embeddingsSim.requests.filter((r) => r.path === '/v1/embeddings').length;

beforeAll(async () => {
  [anthropicSim, embeddingsSim] = await Promise.all([
    startAnthropicUpstream(),
    startOpenAiModalitiesUpstream(),
  ]);
  gateway = await startTestGateway({
    ANTHROPIC_API_KEY: 'sk-sim-anthropic',
    ANTHROPIC_BASE_URL: anthropicSim.url,
    OPENAI_API_KEY: 'sk-upstream',
    OPENAI_BASE_URL: `${embeddingsSim.url}/v1`,
  });
  const account = await json(await gateway.admin('/accounts', { name: 'endpoints' }));
  key = account.key;
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 1000, reference: 'p' });
  openai = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.close();
  await Promise.all([anthropicSim?.close(), embeddingsSim?.close()]);
});

describe('/v1/messages', () => {
  it('serves a native Anthropic answer again, plain and as Anthropic’s event stream', async () => {
    const request = {
      model: 'anthropic/claude-sonnet-4-5',
      max_tokens: 200,
      temperature: 0,
      messages: [{ role: 'user' as const, content: fresh('Bonjour') }],
    };
    const first = await anthropic.messages.create(request).withResponse();
    expect(first.response.headers.get('x-cache-status')).toBe('miss');
    const before = upstreamMessages();
    const again = await anthropic.messages.create(request).withResponse();
    expect(again.response.headers.get('x-cache-status')).toBe('hit; type=exact');
    expect(again.data.content).toEqual(first.data.content);
    expect(again.data.stop_reason).toBe('end_turn');
    expect(again.data.model).toBe('anthropic/claude-sonnet-4-5');
    expect(again.data.usage.output_tokens).toBe(first.data.usage.output_tokens);
    expect(Number(again.response.headers.get('x-cost-cents'))).toBeLessThan(
      Number(first.response.headers.get('x-cost-cents')),
    );

    const stream = anthropic.messages.stream(request);
    const events: string[] = [];
    stream.on('streamEvent', (event) => events.push(event.type));
    const streamed = await stream.finalMessage();
    expect(upstreamMessages()).toBe(before);
    expect(streamed.content).toEqual(first.data.content);
    expect(events[0]).toBe('message_start');
    expect(events).toContain('content_block_delta');
    expect(events.at(-1)).toBe('message_stop');
  });

  it('stores a native stream and serves it to a plain request; a thinking answer is never stored', async () => {
    const request = {
      model: 'anthropic/claude-sonnet-4-5',
      max_tokens: 200,
      temperature: 0,
      messages: [{ role: 'user' as const, content: fresh('Streamed first') }],
    };
    const streamed = await anthropic.messages.stream(request).finalMessage();
    const plain = await anthropic.messages.create(request).withResponse();
    expect(plain.response.headers.get('x-cache-status')).toBe('hit; type=exact');
    expect(plain.data.content).toEqual(streamed.content);

    // Thinking takes no temperature but 1: `force` asks for the store.
    const { temperature: _sampled, ...unsampled } = request;
    const thinking = {
      ...unsampled,
      max_tokens: 4000,
      thinking: { type: 'enabled' as const, budget_tokens: 2048 },
      cache: 'force',
    } as Anthropic.MessageCreateParamsNonStreaming;
    await anthropic.messages.create(thinking);
    const again = await anthropic.messages.create(thinking).withResponse();
    expect(again.response.headers.get('x-cache-status')).toBe('miss');
  });

  it('keys a translated request as sent: a different system prompt misses', async () => {
    const question = fresh('Translated');
    const ask = (system?: string) =>
      anthropic.messages
        .create({
          model: 'local/echo',
          max_tokens: 100,
          temperature: 0,
          ...(system && { system }),
          messages: [{ role: 'user', content: question }],
        } as Anthropic.MessageCreateParamsNonStreaming)
        .withResponse();
    await ask();
    const hit = await ask();
    expect(hit.response.headers.get('x-cache-status')).toBe('hit; type=exact');
    expect(hit.data.content).toEqual([{ type: 'text', text: question }]);
    expect((await ask('Be brief.')).response.headers.get('x-cache-status')).toBe('miss');
  });
});

describe('/v1/embeddings', () => {
  it('serves the same inputs again at half the charge, in either encoding', async () => {
    const input = [fresh('the quick brown fox'), 'jumps over the lazy dog'];
    const first = await openai.embeddings
      .create({ model: 'openai/text-embedding-3-small', input, encoding_format: 'float' })
      .withResponse();
    expect(first.response.headers.get('x-cache-status')).toBe('miss');
    const before = upstreamEmbeddings();
    const again = await openai.embeddings
      .create({ model: 'openai/text-embedding-3-small', input, encoding_format: 'float' })
      .withResponse();
    expect(again.response.headers.get('x-cache-status')).toBe('hit; type=exact');
    expect(again.data.data.map((d) => d.embedding)).toEqual(input.map((text) => vector(text)));
    expect(again.data.usage).toEqual(first.data.usage);
    const cost = Number(first.response.headers.get('x-cost-cents'));
    expect(Number(again.response.headers.get('x-cost-cents'))).toBe(
      Math.ceil(Math.round(cost * 1e7) / 2) / 1e7,
    );
    // The SDK asks for base64 by default and decodes it: the same vectors.
    const decoded = await openai.embeddings.create({ model: 'openai/text-embedding-3-small', input });
    expect(decoded.data.map((d) => d.embedding)).toEqual(input.map((text) => vector(text)));
    expect(upstreamEmbeddings()).toBe(before);
  });

  it('misses on other dimensions, and skip neither looks up nor stores', async () => {
    const input = fresh('dimensions');
    await openai.embeddings.create({ model: 'openai/text-embedding-3-small', input, dimensions: 4 });
    const other = await openai.embeddings
      .create({ model: 'openai/text-embedding-3-small', input, dimensions: 6 })
      .withResponse();
    expect(other.response.headers.get('x-cache-status')).toBe('miss');
    const skipped = await openai.embeddings
      .create({ model: 'openai/text-embedding-3-small', input: fresh('skipped'), cache: 'skip' } as never)
      .withResponse();
    expect(skipped.response.headers.get('x-cache-status')).toBe('skip');
  });
});
