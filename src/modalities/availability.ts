import type { CatalogModel, Modality } from '../catalog/types.ts';
import { chatUnavailability } from '../providers/registry.ts';
import { speechEndpoint, transcriptionsEndpoint } from './audio/endpoint.ts';
import { detectionEndpoint } from './detections/endpoint.ts';
import { embeddingsEndpoint } from './embeddings/endpoint.ts';
import { imagesEndpoint } from './images/endpoint.ts';
import { type EndpointSpec, servable, unavailability } from './models.ts';
import { moderationsEndpoint } from './moderations/endpoint.ts';
import { ocrEndpoint } from './ocr/endpoint.ts';
import { rerankEndpoint } from './rerank/endpoint.ts';
import { translationEndpoint } from './translations/endpoint.ts';

/** The endpoint serving each modality's models; the asynchronous jobs' are added by the caller (they stand above). */
export type ModalityEndpoints = Partial<Record<Modality, EndpointSpec<unknown>>>;

const ENDPOINTS: ModalityEndpoints = {
  embedding: embeddingsEndpoint,
  moderation: moderationsEndpoint,
  rerank: rerankEndpoint,
  image: imagesEndpoint,
  translation: translationEndpoint,
  'object-detection': detectionEndpoint,
  ocr: ocrEndpoint,
  'audio-stt': transcriptionsEndpoint,
  'audio-tts': speechEndpoint,
};

/**
 * Whether this gateway can serve and bill the model on its modality's endpoint, for a model list's `available`;
 * undefined for modalities these endpoints do not serve (chat has its own rule, in the provider registry).
 */
export function isModalityAvailable(model: CatalogModel, env: NodeJS.ProcessEnv): boolean | undefined {
  const endpoint = ENDPOINTS[model.modality];
  return endpoint && servable(env, endpoint, model);
}

/** Whether this gateway can serve and bill the model now: chat models by the chat rule, the rest by their endpoint. */
export function isServable(model: CatalogModel, env: NodeJS.ProcessEnv): boolean {
  return availabilityOf(model, env).available;
}

/**
 * Whether this gateway can serve and bill the model now, and why not when it cannot (`set ANTHROPIC_API_KEY`, the
 * provider's model list not naming it, no price): chat models by the chat rule, the rest by their endpoint's.
 */
export function availabilityOf(
  model: CatalogModel,
  env: NodeJS.ProcessEnv,
  more: ModalityEndpoints = {},
): { available: boolean; reason: string | null } {
  const endpoint = more[model.modality] ?? ENDPOINTS[model.modality];
  const reason =
    model.modality === 'text'
      ? chatUnavailability(model, env)
      : endpoint
        ? unavailability(env, endpoint, model)
        : `no endpoint of this gateway serves ${model.modality} models`;
  return { available: reason === undefined, reason: reason ?? null };
}
