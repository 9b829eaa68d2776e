import { calcPrice, type Provider } from '@pydantic/genai-prices';
import { describe, expect, it } from 'vitest';
import { atBatchRates } from '../../src/batches/hold-line.ts';
import { CAPABILITIES } from '../../src/catalog/capabilities.ts';
import { buildCatalog, dollarsToNanos } from '../../src/catalog/index.ts';
import { localChatModels } from '../../src/catalog/local.ts';
import { ratesAt } from '../../src/catalog/tiers.ts';
import type { CatalogModel } from '../../src/catalog/types.ts';
import { providerEnv, providerKey } from '../../src/provider-env.ts';
import { isAvailable } from '../../src/providers/registry.ts';

// Pinned so that dated price changes in the bundled list do not move these expectations.
const now = new Date('2026-11-01T00:00:00Z');
const catalog = buildCatalog({ now });

function model(id: string): CatalogModel {
  const found = catalog.get(id);
  if (!found) throw new Error(`${id} is not in the catalog`);
  return found;
}

describe('the catalog built from the bundled genai-prices data', () => {
  it('lists over 1,000 models from over 40 providers, each id once', () => {
    const all = catalog.all();
    expect(all.length).toBeGreaterThan(1000);
    expect(catalog.providers().length).toBeGreaterThan(40);
    const ids = all.map((m) => m.id.toLowerCase());
    expect(new Set(ids).size).toBe(ids.length);
    for (const m of all) expect(m.id).toBe(`${m.provider}/${m.id.slice(m.provider.length + 1)}`);
  });

  it('prices known models exactly, in nano-dollars per million tokens', () => {
    expect(model('openai/gpt-4o').prices).toEqual({
      inputNanosPerMillion: 2_500_000_000n,
      outputNanosPerMillion: 10_000_000_000n,
      cachedInputNanosPerMillion: 1_250_000_000n,
      cacheWriteNanosPerMillion: null,
    });
    expect(model('openai/gpt-4o-mini').prices.inputNanosPerMillion).toBe(150_000_000n);
    expect(model('anthropic/claude-sonnet-4-5').prices).toEqual({
      inputNanosPerMillion: 3_000_000_000n,
      outputNanosPerMillion: 15_000_000_000n,
      cachedInputNanosPerMillion: 300_000_000n,
      cacheWriteNanosPerMillion: 3_750_000_000n,
      tiers: [
        {
          aboveInputTokens: 200_000,
          inputNanosPerMillion: 6_000_000_000n,
          outputNanosPerMillion: 22_500_000_000n,
          cachedInputNanosPerMillion: 600_000_000n,
          cacheWriteNanosPerMillion: 7_500_000_000n,
        },
      ],
    });
    expect(model('google/gemini-2.5-flash').prices.outputNanosPerMillion).toBe(2_500_000_000n);
    expect(model('openai/gpt-5-nano').prices.cachedInputNanosPerMillion).toBe(5_000_000n);
  });

  it('keeps the base tier of a tiered price and every tier above it, and says so', () => {
    const pro = model('google/gemini-2.5-pro');
    expect(pro.prices.inputNanosPerMillion).toBe(1_250_000_000n);
    expect(pro.prices.tiers).toEqual([
      {
        aboveInputTokens: 200_000,
        inputNanosPerMillion: 2_500_000_000n,
        outputNanosPerMillion: 15_000_000_000n,
        cachedInputNanosPerMillion: 250_000_000n,
        cacheWriteNanosPerMillion: null,
      },
    ]);
    expect(pro.priceNotes.join(' ')).toMatch(
      /input_mtok is tiered: base rate \$1.25; \$2.5 above 200000 input tokens, applied by the prompt's size/,
    );
    // A flat price has no tiers; a tier that has ended (Claude Sonnet 4.6's, before its flat rate) is not kept.
    expect(model('anthropic/claude-haiku-4-5').prices.tiers).toBeUndefined();
    expect(model('anthropic/claude-sonnet-4-6').prices.tiers).toBeUndefined();
  });

  it('picks the tier a prompt is above, as genai-prices does: greater than its start', () => {
    const { prices } = model('google/gemini-2.5-pro');
    expect(ratesAt(prices, 200_000).inputNanosPerMillion).toBe(1_250_000_000n);
    expect(ratesAt(prices, 200_001).inputNanosPerMillion).toBe(2_500_000_000n);
    const calc = (input_tokens: number) =>
      calcPrice({ input_tokens }, 'gemini-2.5-pro', { providerId: 'google', timestamp: now })?.input_price;
    expect(calc(200_000)).toBeCloseTo(0.25, 9);
    expect(calc(200_001)).toBeCloseTo(0.5000025, 9);
    // The batch rates halve the tier as they do the base.
    expect(atBatchRates(model('google/gemini-2.5-pro')).prices.tiers?.[0]?.outputNanosPerMillion).toBe(
      7_500_000_000n,
    );
  });

  it('takes the dated rate in effect when the catalog is built', () => {
    expect(model('openai/o3').prices.inputNanosPerMillion).toBe(2_000_000_000n);
    const before = buildCatalog({ now: new Date('2025-06-01T00:00:00Z') }).get('openai/o3');
    expect(before?.prices.inputNanosPerMillion).toBe(10_000_000_000n);
    expect(before?.priceNotes).toContain('rates change on 2025-06-10');
  });

  it('lists the peak rate of a model priced by time of day, never the off-peak one', () => {
    // DeepSeek's entry lists the off-peak rate first and the 00:30-16:30 UTC rate (twice as high) as a window.
    expect(model('deepseek/deepseek-chat').prices.inputNanosPerMillion).toBe(270_000_000n);
    expect(model('deepseek/deepseek-reasoner').prices.outputNanosPerMillion).toBe(2_190_000_000n);
  });

  it('keeps models without a usable price, with null prices', () => {
    expect(model('openai/moderation').prices.inputNanosPerMillion).toBeNull();
    const whisper = model('openai/whisper-1');
    expect(whisper.prices.inputNanosPerMillion).toBeNull();
    expect(whisper.priceNotes.join(' ')).toMatch(/audio_hours/);
  });

  it('sets the quirks of OpenAI reasoning models on OpenAI', () => {
    const reasoningModel = {
      reasoning: true,
      noSampling: true,
      nativeFormat: null,
      maxTokensField: 'max_completion_tokens',
    };
    expect(model('openai/o3').quirks).toEqual(reasoningModel);
    expect(model('openai/gpt-5').quirks).toEqual(reasoningModel);
    expect(model('azure/o3-mini').quirks).toEqual(reasoningModel);
    expect(model('openai/gpt-4o').quirks).toEqual({
      reasoning: false,
      noSampling: false,
      nativeFormat: null,
      maxTokensField: 'max_tokens',
    });
    // Another host of the same model sets its own parameter rules; the model still reasons.
    expect(model('openrouter/openai/o3').quirks).toMatchObject({
      reasoning: true,
      maxTokensField: 'max_tokens',
    });
  });

  it('marks native formats and extended thinking of Anthropic and Gemini models', () => {
    expect(model('anthropic/claude-sonnet-4-5')).toMatchObject({
      api: 'anthropic',
      quirks: { reasoning: true, noSampling: false, nativeFormat: 'anthropic', maxTokensField: 'max_tokens' },
    });
    expect(model('anthropic/claude-3-5-haiku-latest').quirks.reasoning).toBe(false);
    expect(model('google/gemini-2.5-flash')).toMatchObject({
      api: 'gemini',
      quirks: { reasoning: true, nativeFormat: 'gemini' },
    });
    expect(model('deepseek/deepseek-reasoner').quirks.reasoning).toBe(true);
    expect(model('x-ai/grok-4-fast-non-reasoning').quirks.reasoning).toBe(false);
    expect(model('groq/llama-3.3-70b-versatile')).toMatchObject({
      api: 'openai',
      quirks: { reasoning: false },
    });
  });

  it('derives modality and capabilities from the data, within the fixed vocabulary', () => {
    expect(model('openai/gpt-4o').capabilities).toEqual(
      expect.arrayContaining(['chat', 'streaming', 'function_calling', 'json_mode', 'vision']),
    );
    expect(model('openai/o3').capabilities).toContain('reasoning');
    expect(model('groq/llama-3.3-70b-versatile').capabilities).not.toContain('vision');
    expect(model('openai/text-embedding-3-small')).toMatchObject({
      modality: 'embedding',
      capabilities: ['embeddings'],
    });
    expect(model('voyageai/voyage-3').modality).toBe('embedding');
    expect(model('groq/whisper-large-v3')).toMatchObject({
      modality: 'audio-stt',
      capabilities: ['speech-to-text'],
    });
    expect(model('openai/gpt-4o-mini-tts').modality).toBe('audio-tts');
    expect(model('openai/gpt-image-1').capabilities[0]).toBe('image-generation');
    expect(model('openai/moderation').modality).toBe('moderation');
    const vocabulary = new Set<string>(CAPABILITIES.map((c) => c.id));
    for (const m of catalog.all()) for (const c of m.capabilities) expect(vocabulary).toContain(c);
  });

  it('sends the provider its own model id where the price list uses a short one', () => {
    expect(model('fireworks/deepseek-r1-0528').providerModelId).toBe(
      'accounts/fireworks/models/deepseek-r1-0528',
    );
    expect(model('openai/gpt-4o').providerModelId).toBe('gpt-4o');
    expect(model('openrouter/openai/gpt-4o').providerModelId).toBe('openai/gpt-4o');
    expect(catalog.all().some((m) => m.id.startsWith('openai/ft:'))).toBe(false);
  });

  it('includes the built-in local models at their own prices', () => {
    for (const local of localChatModels) {
      expect(model(local.id)).toMatchObject({
        provider: 'local',
        api: 'local',
        modality: 'text',
        contextWindow: local.contextWindow,
        prices: {
          inputNanosPerMillion: local.inputNanosPerMillion,
          outputNanosPerMillion: local.outputNanosPerMillion,
        },
      });
    }
  });

  it('filters by modality and provider, and finds an id whatever its case', () => {
    const embeddings = catalog.list({ modality: 'embedding' });
    expect(embeddings.length).toBeGreaterThan(10);
    expect(embeddings.every((m) => m.modality === 'embedding')).toBe(true);
    const anthropic = catalog.list({ provider: 'anthropic' });
    expect(anthropic.length).toBeGreaterThan(10);
    expect(anthropic.every((m) => m.provider === 'anthropic')).toBe(true);
    expect(catalog.list({ modality: 'embedding', provider: 'openai' }).map((m) => m.id)).toContain(
      'openai/text-embedding-3-small',
    );
    expect(catalog.get('OpenAI/GPT-4o')?.id).toBe('openai/gpt-4o');
    expect(catalog.get('openai/no-such-model')).toBeUndefined();
  });

  it('keeps the first of two price-list entries under one id', () => {
    const twice: Provider = {
      id: 'acme',
      name: 'Acme',
      api_pattern: 'https://acme',
      models: [
        { id: 'm', match: { equals: 'm' }, prices: { input_mtok: 1, output_mtok: 2 } },
        { id: 'm', match: { equals: 'm' }, prices: { input_mtok: 9, output_mtok: 9 } },
      ],
    };
    const small = buildCatalog({ providers: [twice], now });
    expect(small.list({ provider: 'acme' })).toHaveLength(1);
    expect(small.get('acme/m')?.prices.inputNanosPerMillion).toBe(1_000_000_000n);
  });
});

describe('dollarsToNanos', () => {
  it.each([
    [2.5, 2_500_000_000n, true],
    [150, 150_000_000_000n, true],
    [0.003625, 3_625_000n, true],
    // Number#toString would give "1e-7"; toFixed does not.
    [1e-7, 100n, true],
    [0.18000000000000002, 180_000_000n, false],
    [1 / 12, 83_333_333n, false],
    [0, 0n, true],
  ])('converts $%s per million to %s nanos', (dollars, nanos, exact) => {
    expect(dollarsToNanos(dollars)).toEqual({ nanos, exact });
  });
});

describe('provider keys', () => {
  it('names variables after the provider id', () => {
    expect(providerEnv('openai')).toMatchObject({ keyVar: 'OPENAI_API_KEY', baseUrlVar: 'OPENAI_BASE_URL' });
    expect(providerEnv('x-ai')).toMatchObject({ keyVar: 'X_AI_API_KEY', baseUrlVar: 'X_AI_BASE_URL' });
    expect(providerEnv('huggingface_novita').keyVar).toBe('HUGGINGFACE_NOVITA_API_KEY');
    expect(providerEnv('google').keyVars).toEqual(['GOOGLE_API_KEY', 'GEMINI_API_KEY']);
    expect(providerKey('google', { GEMINI_API_KEY: 'g' })).toBe('g');
  });

  it('makes a model available when its provider has a key; local models always', () => {
    expect(isAvailable(model('local/echo'), {})).toBe(true);
    expect(isAvailable(model('openai/gpt-4o'), {})).toBe(false);
    expect(isAvailable(model('openai/gpt-4o'), { OPENAI_API_KEY: '' })).toBe(false);
    expect(isAvailable(model('openai/gpt-4o'), { OPENAI_API_KEY: 'sk-x' })).toBe(true);
    expect(isAvailable(model('google/gemini-2.5-flash'), { GEMINI_API_KEY: 'g' })).toBe(true);
  });
});

describe('the capability vocabulary', () => {
  it('has every required id, each with a description and an endpoint', () => {
    const ids = CAPABILITIES.map((c) => c.id);
    for (const id of [
      'chat',
      'vision',
      'function_calling',
      'json_mode',
      'reasoning',
      'streaming',
      'embeddings',
      'image-generation',
      'image-editing',
      'speech-to-text',
      'realtime-transcription',
      'text-to-speech',
      'text-to-music',
      'text-to-video',
      'text-to-3d',
      'moderation',
      'translation',
      'classification',
      'object-detection',
      'ocr',
      'rerank',
      'async',
    ]) {
      expect(ids).toContain(id);
    }
    for (const c of CAPABILITIES) expect(c.endpoint.path).toMatch(/^\/v1\//);
  });
});
