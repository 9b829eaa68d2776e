import { apiFamilyOf } from '../catalog/classify.ts';
import { callableModelId } from '../catalog/extra-models.ts';
import type { ApiFamily, CatalogModel } from '../catalog/types.ts';
import type { Adapters, Capability } from '../contracts/adapters.ts';
import type { Upstream } from '../contracts/chat.ts';
import type { ModalityUpstream } from '../contracts/modality.ts';
import type { ModelLister } from '../contracts/model-list.ts';
import { providerEnv, providerKey } from '../provider-env.ts';
import { anthropicChat } from './anthropic/chat.ts';
import { listAnthropicModels } from './anthropic/models.ts';
import { anthropicMessages } from './anthropic/native.ts';
import { COHERE_BASE_URL } from './cohere/api.ts';
import { cohereEmbeddings } from './cohere/embeddings.ts';
import { cohereRerank } from './cohere/rerank.ts';
import { DEEPGRAM_BASE_URL } from './deepgram/api.ts';
import { deepgramListen } from './deepgram/listen.ts';
import { deepgramLive } from './deepgram/live.ts';
import { DEEPL_BASE_URL } from './deepl/api.ts';
import { deeplTranslate } from './deepl/translate.ts';
import { ELEVENLABS_BASE_URL } from './elevenlabs/api.ts';
import { elevenLabsMusic } from './elevenlabs/music.ts';
import { elevenLabsSpeech } from './elevenlabs/speech.ts';
import { geminiChat } from './gemini/chat.ts';
import { geminiEmbeddings } from './gemini/embeddings.ts';
import { listGeminiModels } from './gemini/models.ts';
import { veoVideos } from './gemini/videos.ts';
import { GOOGLE_VISION_BASE_URL } from './google-vision/api.ts';
import { visionObjects } from './google-vision/objects.ts';
import { localChat } from './local/chat.ts';
import { localEmbeddings } from './local/embeddings.ts';
import { localImages } from './local/images.ts';
import { localModerations } from './local/moderations.ts';
import { localSpeech } from './local/speech.ts';
import { localTranscriptions } from './local/transcribe.ts';
import { MESHY_BASE_URL, meshyTextTo3d } from './meshy/text-to-3d.ts';
import { mistralModerations } from './mistral/moderations.ts';
import { mistralOcr } from './mistral/ocr.ts';
import { notOffered } from './offered-models.ts';
import { openAiSpeech, openAiTranscriptions } from './openai/audio.ts';
import { openAiChat } from './openai/chat.ts';
import { openAiEmbeddings } from './openai/embeddings.ts';
import { openAiImages } from './openai/images.ts';
import { listOpenAiModels } from './openai/models.ts';
import { openAiModerations } from './openai/moderations.ts';
import { STABILITY_BASE_URL, stabilityImages } from './stability/images.ts';
import { VOYAGE_BASE_URL } from './voyage/api.ts';
import { voyageEmbeddings } from './voyage/embeddings.ts';
import { voyageRerank } from './voyage/rerank.ts';

interface ProviderEntry {
  /** Where the provider listens when `<PROVIDER>_BASE_URL` is not set. */
  baseUrl?: string;
  /** Where its own APIs listen when they are not at `baseUrl` (Cohere's chat is its OpenAI compatibility layer). */
  nativeBaseUrl?: string;
  /** The adapters of its own APIs; what it serves through an API family it speaks is in BY_API. */
  adapters?: Partial<Adapters>;
  /**
   * How to ask which models its key can use, when not its API family's list (LIST_BY_API); null for a provider
   * with no such list, whose configured key alone makes its models available.
   */
  modelList?: ModelLister | null;
}

/**
 * Every provider the gateway can call, by provider id. As with the official SDKs, the OpenAI-style URLs include
 * the version path and Anthropic's and Google's do not. Cohere's chat goes through its OpenAI compatibility layer
 * and its embed and rerank through its native API (whose adapters also trim a COHERE_BASE_URL set for chat).
 */
const PROVIDERS: Readonly<Record<string, ProviderEntry>> = {
  // The built-in models: no address, no key (src/providers/local).
  local: {
    adapters: {
      embeddings: localEmbeddings,
      moderations: localModerations,
      images: localImages,
      speech: localSpeech,
      transcription: localTranscriptions,
    },
  },
  openai: {
    baseUrl: 'https://api.openai.com/v1',
    adapters: {
      moderations: openAiModerations,
      images: openAiImages,
      transcription: openAiTranscriptions,
      speech: openAiSpeech,
    },
  },
  anthropic: { baseUrl: 'https://api.anthropic.com' },
  google: {
    baseUrl: 'https://generativelanguage.googleapis.com',
    adapters: { embeddings: geminiEmbeddings, video: veoVideos },
  },
  groq: { baseUrl: 'https://api.groq.com/openai/v1', adapters: { transcription: openAiTranscriptions } },
  together: { baseUrl: 'https://api.together.xyz/v1' },
  fireworks: { baseUrl: 'https://api.fireworks.ai/inference/v1' },
  deepseek: { baseUrl: 'https://api.deepseek.com/v1' },
  mistral: {
    baseUrl: 'https://api.mistral.ai/v1',
    adapters: { moderations: mistralModerations, ocr: mistralOcr },
  },
  'x-ai': { baseUrl: 'https://api.x.ai/v1' },
  openrouter: { baseUrl: 'https://openrouter.ai/api/v1' },
  perplexity: { baseUrl: 'https://api.perplexity.ai' },
  cerebras: { baseUrl: 'https://api.cerebras.ai/v1' },
  novita: { baseUrl: 'https://api.novita.ai/v3/openai' },
  moonshotai: { baseUrl: 'https://api.moonshot.ai/v1' },
  cohere: {
    baseUrl: 'https://api.cohere.ai/compatibility/v1',
    nativeBaseUrl: COHERE_BASE_URL,
    adapters: { embeddings: cohereEmbeddings, rerank: cohereRerank },
    // Its compatibility layer documents no model list, and its native one is of another shape.
    modelList: null,
  },
  // The media and task providers below document no list of models a key can use.
  voyageai: {
    baseUrl: VOYAGE_BASE_URL,
    adapters: { embeddings: voyageEmbeddings, rerank: voyageRerank },
    modelList: null,
  },
  stability: { baseUrl: STABILITY_BASE_URL, adapters: { images: stabilityImages }, modelList: null },
  deepl: { baseUrl: DEEPL_BASE_URL, adapters: { translations: deeplTranslate }, modelList: null },
  'google-vision': {
    baseUrl: GOOGLE_VISION_BASE_URL,
    adapters: { detections: visionObjects },
    modelList: null,
  },
  deepgram: {
    baseUrl: DEEPGRAM_BASE_URL,
    adapters: { transcription: deepgramListen, realtime: deepgramLive },
    modelList: null,
  },
  elevenlabs: {
    baseUrl: ELEVENLABS_BASE_URL,
    adapters: { speech: elevenLabsSpeech, music: elevenLabsMusic },
    modelList: null,
  },
  meshy: { baseUrl: MESHY_BASE_URL, adapters: { '3d': meshyTextTo3d }, modelList: null },
};

/** What any provider speaking an API family gets: chat for every family, embeddings for OpenAI-compatible ones. */
const BY_API: Readonly<Record<ApiFamily, Partial<Adapters>>> = {
  openai: { chat: openAiChat, embeddings: openAiEmbeddings },
  anthropic: { chat: anthropicChat, messages: anthropicMessages },
  gemini: { chat: geminiChat },
  local: { chat: localChat },
};

/** The model list of each API family: OpenAI's `GET /models` for every OpenAI-compatible provider. */
const LIST_BY_API: Readonly<Record<ApiFamily, ModelLister | undefined>> = {
  openai: listOpenAiModels,
  anthropic: listAnthropicModels,
  gemini: listGeminiModels,
  local: undefined,
};

/** How to ask the provider which models its key can use; undefined when it has no such list. */
export function modelListerOf(provider: string): ModelLister | undefined {
  const entry = PROVIDERS[provider];
  if (entry && 'modelList' in entry) return entry.modelList ?? undefined;
  return LIST_BY_API[apiFamilyOf(provider)];
}

/**
 * The adapter that serves `capability` for the model: chat always by the model's API family, the rest by the
 * provider's own API first, then by the family it speaks. Undefined when no adapter does (yet).
 */
export function adapterFor<C extends Capability>(
  model: CatalogModel,
  capability: C,
): Adapters[C] | undefined {
  if (capability === 'chat') return BY_API[model.api]?.chat as Adapters[C] | undefined;
  return PROVIDERS[model.provider]?.adapters?.[capability] ?? BY_API[model.api]?.[capability];
}

export function apiKeyOf(provider: string, env: NodeJS.ProcessEnv): string | undefined {
  return provider === 'local' ? 'local' : providerKey(provider, env);
}

export function baseUrlOf(provider: string, env: NodeJS.ProcessEnv): string | undefined {
  return env[providerEnv(provider).baseUrlVar] || PROVIDERS[provider]?.baseUrl;
}

/**
 * Why a chat request for the model cannot be served here, or undefined when it can: it needs an adapter, a key, a
 * base URL, and the provider's model list naming it (when the provider has one and it was fetched:
 * offered-models.ts).
 */
export function chatUnavailability(model: CatalogModel, env: NodeJS.ProcessEnv): string | undefined {
  if (adapterFor(model, 'chat') === undefined) return 'no adapter speaks its API yet';
  return configurationMissing(model, env) ?? notOffered(model, env);
}

export function isAvailable(model: CatalogModel, env: NodeJS.ProcessEnv): boolean {
  return chatUnavailability(model, env) === undefined;
}

/** What the operator must set for the model's provider to be called (`set OPENAI_API_KEY`), or undefined. */
export function configurationMissing(model: CatalogModel, env: NodeJS.ProcessEnv): string | undefined {
  const names = providerEnv(model.provider);
  if (apiKeyOf(model.provider, env) === undefined) return `set ${names.keyVars.join(' or ')}`;
  if (model.api === 'local' || baseUrlOf(model.provider, env) !== undefined) return undefined;
  return `set ${names.baseUrlVar}`;
}

/** Where and how to call a chat model, or undefined when the gateway has no key or no address for it. */
export function upstreamOf(
  model: CatalogModel,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Upstream | undefined {
  const apiKey = apiKeyOf(model.provider, env);
  const baseUrl = model.api === 'local' ? 'local:' : baseUrlOf(model.provider, env);
  if (!apiKey || !baseUrl) return undefined;
  return {
    model: model.providerModelId,
    baseUrl,
    apiKey,
    timeoutMs,
    quirks: {
      noSampling: model.quirks.noSampling,
      maxTokensField: model.quirks.maxTokensField,
      reasoning: model.quirks.reasoning,
    },
  };
}

/** Where and with which key to call a non-chat model, or undefined when the gateway has no key or address. */
export function modalityUpstreamOf(
  model: CatalogModel,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): ModalityUpstream | undefined {
  const apiKey = apiKeyOf(model.provider, env);
  const entry = PROVIDERS[model.provider];
  const baseUrl =
    model.api === 'local'
      ? 'local:'
      : env[providerEnv(model.provider).baseUrlVar] || entry?.nativeBaseUrl || entry?.baseUrl;
  if (!apiKey || !baseUrl) return undefined;
  return { model: callableModelId(model), baseUrl, apiKey, timeoutMs };
}
