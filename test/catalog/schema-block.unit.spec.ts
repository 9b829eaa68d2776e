import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../../src/catalog/index.ts';
import { SchemaBlock, schemaBlock } from '../../src/catalog/schema-block.ts';
import type { CatalogModel } from '../../src/catalog/types.ts';

const catalog = buildCatalog();
const base = 'https://gw.example.com';

function model(id: string): CatalogModel {
  const found = catalog.get(id);
  if (!found) throw new Error(`${id} is not in the catalog`);
  return found;
}

describe('the schema block, generated from catalog data', () => {
  it('gives a chat model a chat request with max_tokens and a temperature', () => {
    const block = schemaBlock(model('openai/gpt-4o'), `${base}/`);
    expect(block.endpoint).toEqual({
      method: 'POST',
      path: '/v1/chat/completions',
      url: `${base}/v1/chat/completions`,
    });
    const request = JSON.parse(block.request_example);
    expect(request).toMatchObject({ model: 'openai/gpt-4o', max_tokens: 256, temperature: 0.7 });
    expect(request.messages).toEqual([{ role: 'user', content: 'Say hello.' }]);
    expect(JSON.parse(block.response_example)).toMatchObject({
      object: 'chat.completion',
      model: 'openai/gpt-4o',
    });
  });

  it('follows the quirks of a reasoning model: max_completion_tokens, no temperature, reasoning deltas', () => {
    const block = schemaBlock(model('openai/o3'), base);
    expect(block.quirks).toEqual({
      reasoning: true,
      noSampling: true,
      nativeFormat: null,
      maxTokensField: 'max_completion_tokens',
    });
    const request = JSON.parse(block.request_example);
    expect(request.max_completion_tokens).toBe(256);
    expect(request).not.toHaveProperty('max_tokens');
    expect(request).not.toHaveProperty('temperature');
    expect(block.sdk.python).toContain('max_completion_tokens=256');
    expect(block.sdk.python).not.toContain('temperature');
    const events = (block.streaming_example ?? '').trim().split('\n\n');
    expect(events.every((e) => e.startsWith('data: '))).toBe(true);
    expect(events.at(-1)).toBe('data: [DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice('data: '.length)));
    expect(chunks.some((c) => c.choices[0]?.delta?.reasoning_content)).toBe(true);
    expect(chunks.at(-1).usage.completion_tokens_details.reasoning_tokens).toBeGreaterThan(0);
  });

  it('names the native message format of Anthropic models', () => {
    expect(schemaBlock(model('anthropic/claude-sonnet-4-5'), base).quirks.nativeFormat).toBe('anthropic');
  });

  it('points the OpenAI SDKs at the gateway', () => {
    const { sdk } = schemaBlock(model('openai/gpt-4o'), base);
    expect(sdk.curl).toContain(`curl '${base}/v1/chat/completions'`);
    expect(sdk.curl).toContain('Authorization: Bearer $GATEWAY_API_KEY');
    expect(sdk.python).toContain(`OpenAI(base_url="${base}/v1"`);
    expect(sdk.python).toContain('client.chat.completions.create(');
    expect(sdk.typescript).toContain(`baseURL: '${base}/v1'`);
    expect(sdk.typescript).toContain("model: 'openai/gpt-4o'");
  });

  it('uses the endpoint of the model modality', () => {
    const embedding = schemaBlock(model('openai/text-embedding-3-small'), base);
    expect(embedding.endpoint.path).toBe('/v1/embeddings');
    expect(embedding.sdk.python).toContain('client.embeddings.create(');
    expect(embedding.streaming_example).toBeNull();
    const whisper = schemaBlock(model('groq/whisper-large-v3'), base);
    expect(whisper.endpoint.path).toBe('/v1/audio/transcriptions');
    expect(whisper.sdk.curl).toContain('-F file=@');
    expect(schemaBlock(model('openai/gpt-image-1'), base).endpoint.path).toBe('/v1/images/generations');
    expect(schemaBlock(model('openai/gpt-realtime'), base).endpoint).toMatchObject({
      method: 'GET',
      path: '/v1/realtime',
    });
  });

  it('produces a valid block for every model of the catalog', () => {
    for (const m of catalog.all()) {
      const block = SchemaBlock.parse(schemaBlock(m, base));
      expect(JSON.parse(block.request_example).model).toBe(m.id);
    }
  });
});
