import type { CatalogModel, Modality } from '../catalog/types.ts';
import { isAvailable } from '../providers/registry.ts';
import { speechEndpoint, transcriptionsEndpoint } from './audio/endpoint.ts';
import { detectionEndpoint } from './detections/endpoint.ts';
import { embeddingsEndpoint } from './embeddings/endpoint.ts';
import { imagesEndpoint } from './images/endpoint.ts';
import { type EndpointSpec, servable } from './models.ts';
import { moderationsEndpoint } from './moderations/endpoint.ts';
import { ocrEndpoint } from './ocr/endpoint.ts';
import { rerankEndpoint } from './rerank/endpoint.ts';
import { translationEndpoint } from './translations/endpoint.ts';

const ENDPOINTS: Partial<Record<Modality, EndpointSpec<unknown>>> = {
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
  return model.modality === 'text' ? isAvailable(model, env) : (isModalityAvailable(model, env) ?? false);
}
