import { providerEnv, providerKey } from '../catalog/env.ts';
import type { ApiFamily, CatalogModel } from '../catalog/types.ts';
import { anthropicChat } from './anthropic/chat.ts';
import { geminiChat } from './gemini/chat.ts';
import { localChat } from './local/chat.ts';
import { openAiChat } from './openai/chat.ts';
import type { ChatAdapter, Upstream } from './types.ts';

export const chatAdapters: Record<ApiFamily, ChatAdapter | undefined> = {
  openai: openAiChat,
  anthropic: anthropicChat,
  gemini: geminiChat,
  local: localChat,
};

/**
 * Where each provider listens when `<PROVIDER>_BASE_URL` is not set. As with the official SDKs, the OpenAI-style
 * URLs include the version path and Anthropic's and Google's do not.
 */
const DEFAULT_BASE_URLS: Record<string, string> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
  google: 'https://generativelanguage.googleapis.com',
  groq: 'https://api.groq.com/openai/v1',
  together: 'https://api.together.xyz/v1',
  fireworks: 'https://api.fireworks.ai/inference/v1',
  deepseek: 'https://api.deepseek.com/v1',
  mistral: 'https://api.mistral.ai/v1',
  'x-ai': 'https://api.x.ai/v1',
  openrouter: 'https://openrouter.ai/api/v1',
  perplexity: 'https://api.perplexity.ai',
  cerebras: 'https://api.cerebras.ai/v1',
  novita: 'https://api.novita.ai/v3/openai',
  moonshotai: 'https://api.moonshot.ai/v1',
  cohere: 'https://api.cohere.ai/compatibility/v1',
};

export function apiKeyOf(provider: string, env: NodeJS.ProcessEnv): string | undefined {
  return provider === 'local' ? 'local' : providerKey(provider, env);
}

export function baseUrlOf(provider: string, env: NodeJS.ProcessEnv): string | undefined {
  return env[providerEnv(provider).baseUrlVar] || DEFAULT_BASE_URLS[provider];
}

/** Whether a chat request for the model can be served: an adapter, a key and a base URL. */
export function isAvailable(model: CatalogModel, env: NodeJS.ProcessEnv): boolean {
  return (
    chatAdapters[model.api] !== undefined &&
    apiKeyOf(model.provider, env) !== undefined &&
    (model.api === 'local' || baseUrlOf(model.provider, env) !== undefined)
  );
}

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
