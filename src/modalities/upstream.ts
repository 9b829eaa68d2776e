import { providerEnv, providerKey } from '../catalog/env.ts';
import type { CatalogModel } from '../catalog/types.ts';
import { COHERE_BASE_URL } from '../providers/cohere/api.ts';
import { DEEPGRAM_BASE_URL } from '../providers/deepgram/api.ts';
import { DEEPL_BASE_URL } from '../providers/deepl/api.ts';
import { ELEVENLABS_BASE_URL } from '../providers/elevenlabs/api.ts';
import { GOOGLE_VISION_BASE_URL } from '../providers/google-vision/api.ts';
import { baseUrlOf } from '../providers/registry.ts';
import { STABILITY_BASE_URL } from '../providers/stability/images.ts';
import { VOYAGE_BASE_URL } from '../providers/voyage/api.ts';
import { callableModelId } from './extra-models.ts';
import type { ModalityUpstream } from './types.ts';

/**
 * Where providers reached only by these endpoints listen when `<PROVIDER>_BASE_URL` is not set. Cohere is here
 * too: the chat registry's default for it is the OpenAI compatibility layer, and these endpoints speak its native
 * API. Every other provider uses the chat registry's default.
 */
const DEFAULT_BASE_URLS: Readonly<Record<string, string>> = {
  cohere: COHERE_BASE_URL,
  voyageai: VOYAGE_BASE_URL,
  stability: STABILITY_BASE_URL,
  deepl: DEEPL_BASE_URL,
  'google-vision': GOOGLE_VISION_BASE_URL,
  deepgram: DEEPGRAM_BASE_URL,
  elevenlabs: ELEVENLABS_BASE_URL,
  meshy: 'https://api.meshy.ai',
};

export function modalityBaseUrl(provider: string, env: NodeJS.ProcessEnv): string | undefined {
  return env[providerEnv(provider).baseUrlVar] || DEFAULT_BASE_URLS[provider] || baseUrlOf(provider, env);
}

/** Where and with which key to call the model, or undefined when the gateway has no key or no address for it. */
export function modalityUpstream(
  model: CatalogModel,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): ModalityUpstream | undefined {
  const apiKey = providerKey(model.provider, env);
  const baseUrl = modalityBaseUrl(model.provider, env);
  if (!apiKey || !baseUrl) return undefined;
  return { model: callableModelId(model), baseUrl, apiKey, timeoutMs };
}
