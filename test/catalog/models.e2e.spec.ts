/**
 * The catalog through HTTP. Needs the model routes registered under /v1 in src/http/routes.ts, reading provider keys
 * from the gateway's configured environment and using the gateway's own origin as the public base URL.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

let gateway: TestGateway;
let key: string;

beforeAll(async () => {
  // A key makes OpenAI's models available; it is never used, as nothing here calls upstream.
  gateway = await startTestGateway({ OPENAI_API_KEY: 'sk-test-catalog' });
  key = (await json(await gateway.admin('/accounts', { name: 'catalog' }))).key;
});
afterAll(async () => {
  await gateway?.close();
});

const get = (path: string) =>
  fetch(`${gateway.url}/v1${path}`, { headers: { authorization: `Bearer ${key}` } });

describe('GET /v1/models', () => {
  it('lists over 1,000 models from over 40 providers in the standard list shape with all=true', async () => {
    const response = await get('/models?all=true');
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body.object).toBe('list');
    expect(body.data.length).toBeGreaterThan(1000);
    expect(new Set(body.data.map((m: { provider: string }) => m.provider)).size).toBeGreaterThan(40);
    const gpt4o = body.data.find((m: { id: string }) => m.id === 'openai/gpt-4o');
    expect(gpt4o).toMatchObject({
      object: 'model',
      created: 0,
      owned_by: 'openai',
      provider: 'openai',
      modality: 'text',
      context_window: 128000,
      pricing: { input_per_million_usd: 2.5, output_per_million_usd: 10, cached_input_per_million_usd: 1.25 },
      quirks: { reasoning: false, noSampling: false, nativeFormat: null, maxTokensField: 'max_tokens' },
      deprecated: false,
    });
    expect(gpt4o.capabilities).toContain('vision');
    expect(gpt4o.available).toBe(true);
    expect(body.data.find((m: { id: string }) => m.id === 'anthropic/claude-sonnet-4-5').available).toBe(
      false,
    );
    expect(body.data.find((m: { id: string }) => m.id === 'local/echo')).toMatchObject({
      available: true,
      pricing: { input_per_million_usd: 0.15, output_per_million_usd: 0.6 },
    });
  });

  it('lists by default only what this gateway can serve now, saying why the rest cannot be', async () => {
    const served = (await json(await get('/models'))).data;
    expect(served.every((m: { available: boolean }) => m.available)).toBe(true);
    const ids = served.map((m: { id: string }) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['openai/gpt-4o', 'local/echo']));
    expect(ids).not.toContain('anthropic/claude-sonnet-4-5');
    const rest = (await json(await get('/models?available=false'))).data;
    expect(rest.find((m: { id: string }) => m.id === 'anthropic/claude-sonnet-4-5')).toMatchObject({
      available: false,
      availability_reason: 'set ANTHROPIC_API_KEY',
    });
    expect(served.find((m: { id: string }) => m.id === 'openai/gpt-4o')).toMatchObject({
      availability_reason: null,
    });
  });

  it('filters by modality and provider', async () => {
    const embeddings = await json(await get('/models?modality=embedding&all=true'));
    expect(embeddings.data.length).toBeGreaterThan(10);
    expect(embeddings.data.every((m: { modality: string }) => m.modality === 'embedding')).toBe(true);
    const anthropic = await json(await get('/models?provider=anthropic&modality=text&all=true'));
    expect(anthropic.data.length).toBeGreaterThan(10);
    expect(anthropic.data.every((m: { provider: string }) => m.provider === 'anthropic')).toBe(true);
    expect((await json(await get('/models?provider=nobody&all=true'))).data).toEqual([]);
    // Matched ignoring case, as ids are.
    expect((await json(await get('/models?provider=Anthropic&modality=text&all=true'))).data).toEqual(
      anthropic.data,
    );
    expect((await json(await get('/models?provider=anthropic'))).data).toEqual([]);
  });

  it('refuses an unknown modality, naming the parameter', async () => {
    const response = await get('/models?modality=smell');
    expect(response.status).toBe(400);
    const body = await json(response);
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 400 });
    expect(body.error.message).toContain('modality');
  });

  it('needs an API key', async () => {
    const response = await fetch(`${gateway.url}/v1/models`);
    expect(response.status).toBe(401);
    expect((await json(response)).error.type).toBe('authentication_error');
  });
});

describe('GET /v1/models/{provider}/{model}', () => {
  it('answers the record with a schema block pointing at this gateway', async () => {
    const response = await get('/models/openai/o3');
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body).toMatchObject({
      id: 'openai/o3',
      provider: 'openai',
      pricing: { input_per_million_usd: 2 },
    });
    expect(body.schema.endpoint).toEqual({
      method: 'POST',
      path: '/v1/chat/completions',
      url: `${gateway.url}/v1/chat/completions`,
    });
    expect(body.schema.quirks).toMatchObject({ noSampling: true, maxTokensField: 'max_completion_tokens' });
    const request = JSON.parse(body.schema.request_example);
    expect(request).toMatchObject({ model: 'openai/o3', max_completion_tokens: 256 });
    expect(request).not.toHaveProperty('temperature');
    expect(body.schema.streaming_example).toContain('data: [DONE]');
    expect(body.schema.sdk.python).toContain(`base_url="${gateway.url}/v1"`);
  });

  it('takes model ids that contain slashes', async () => {
    const body = await json(await get('/models/openrouter/openai/gpt-4o'));
    expect(body).toMatchObject({ id: 'openrouter/openai/gpt-4o', provider: 'openrouter' });
    const schema = await json(await get('/models/openrouter/openai/gpt-4o/schema'));
    expect(schema.endpoint.path).toBe('/v1/chat/completions');
    expect(schema).not.toHaveProperty('id');
  });

  it('answers the schema block alone at /schema', async () => {
    const response = await get('/models/openai/text-embedding-3-small/schema');
    expect(response.status).toBe(200);
    const schema = await json(response);
    expect(schema.endpoint).toMatchObject({ method: 'POST', path: '/v1/embeddings' });
    expect(Object.keys(schema).sort()).toEqual(
      ['endpoint', 'quirks', 'request_example', 'response_example', 'sdk', 'streaming_example'].sort(),
    );
  });

  it.each([
    '/models/openai/no-such-model',
    '/models/openai/no-such-model/schema',
    '/models/nobody/gpt-4o',
    '/models/no-such-model',
  ])('answers 404 model_not_found for %s', async (path) => {
    const response = await get(path);
    expect(response.status).toBe(404);
    expect((await json(response)).error).toMatchObject({ type: 'model_not_found', code: 404 });
  });

  it('resolves a provider-less id to the one servable model of that name', async () => {
    // openai/gpt-4o has a key here; github-copilot/gpt-4o (the same name) has none.
    expect(await json(await get('/models/gpt-4o'))).toMatchObject({ id: 'openai/gpt-4o' });
  });
});

describe('GET /v1/capabilities', () => {
  it('lists the fixed vocabulary with descriptions and endpoints', async () => {
    const body = await json(await get('/capabilities'));
    expect(body.object).toBe('list');
    const byId = new Map(body.data.map((c: { id: string }) => [c.id, c]));
    for (const id of [
      'chat',
      'vision',
      'function_calling',
      'reasoning',
      'embeddings',
      'text-to-video',
      'async',
    ]) {
      expect(byId.get(id)).toMatchObject({
        description: expect.any(String),
        endpoint: { path: expect.any(String) },
      });
    }
    expect(byId.get('embeddings')).toMatchObject({ endpoint: { method: 'POST', path: '/v1/embeddings' } });
  });

  it("names each endpoint's default model on this gateway (only OpenAI configured here), null where a model is required", async () => {
    const byId = new Map((await json(await get('/capabilities'))).data.map((c: { id: string }) => [c.id, c]));
    expect(byId.get('chat')).toMatchObject({ default_model: null });
    expect(byId.get('embeddings')).toMatchObject({ default_model: null });
    expect(byId.get('moderation')).toMatchObject({ default_model: 'openai/omni-moderation-latest' });
    expect(byId.get('image-generation')).toMatchObject({ default_model: 'openai/gpt-image-1' });
    expect(byId.get('translation')).toMatchObject({ default_model: 'openai/gpt-4o-mini' });
    expect(byId.get('classification')).toMatchObject({ default_model: 'openai/gpt-4o-mini' });
    // No Cohere, Voyage, Deepgram, Google or Meshy key: those endpoints have no default here.
    expect(byId.get('rerank')).toMatchObject({ default_model: null });
    expect(byId.get('text-to-video')).toMatchObject({ default_model: null });
    expect(byId.get('realtime-transcription')).toMatchObject({ default_model: null });
  });
});

describe('the catalog through the official openai SDK', () => {
  it('lists and retrieves models', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    expect(ids).toContain('openai/gpt-4o');
    expect(ids).not.toContain('anthropic/claude-sonnet-4-5');
    const all: string[] = [];
    for await (const m of client.models.list({ query: { all: 'true' } } as never)) all.push(m.id);
    expect(all).toContain('anthropic/claude-sonnet-4-5');
    // The SDK encodes the slash of the id (openai%2Fgpt-4o).
    const retrieved = await client.models.retrieve('openai/gpt-4o');
    expect(retrieved).toMatchObject({ id: 'openai/gpt-4o', object: 'model', owned_by: 'openai' });
  });
});
