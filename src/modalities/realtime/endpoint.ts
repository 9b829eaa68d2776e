import { findModel } from '../../catalog/extra-models.ts';
import type { CatalogModel } from '../../catalog/types.ts';
import { RequestRefused } from '../../contracts/errors.ts';
import type { LiveAdapter } from '../../contracts/realtime.ts';
import { adapterFor } from '../../providers/registry.ts';
import { type EndpointSpec, type ModalityTarget, type ModelSource, resolveModalityModel } from '../models.ts';
import { realtimeRate } from './pricing.ts';

export const REALTIME_CAPABILITY = 'realtime-transcription';
export const PREFERRED_REALTIME_MODELS = ['deepgram/nova-3'];

export const realtimeEndpoint: EndpointSpec<LiveAdapter> = {
  path: '/v1/realtime',
  modality: 'audio-stt',
  adapterOf: (model: CatalogModel) =>
    model.capabilities.includes(REALTIME_CAPABILITY) ? adapterFor(model, 'realtime') : undefined,
  unpriced: (model: CatalogModel) =>
    realtimeRate(model) === undefined
      ? 'has no per-minute price for streamed audio, so it cannot be billed'
      : undefined,
};

/** The model a stream names; a speech-to-text model that only takes recorded audio is pointed to that endpoint. */
export function resolveRealtimeModel(source: ModelSource, id: string): ModalityTarget<LiveAdapter> {
  const model = findModel(source.catalog, id);
  if (model?.modality === 'audio-stt' && !model.capabilities.includes(REALTIME_CAPABILITY)) {
    throw new RequestRefused(
      'invalid',
      `'model': ${model.id} does not transcribe live audio; send recorded audio to POST /v1/audio/transcriptions, or stream to a model with the ${REALTIME_CAPABILITY} capability (GET /v1/models?modality=audio-stt)`,
    );
  }
  return resolveModalityModel(source, realtimeEndpoint, id);
}
