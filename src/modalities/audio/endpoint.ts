import type { CatalogModel } from '../../catalog/types.ts';
import type { SpeechAdapter, TranscriptionAdapter } from '../../contracts/audio.ts';
import { adapterFor } from '../../providers/registry.ts';
import type { EndpointSpec } from '../models.ts';

/**
 * Only models with a speech-to-text capability: the audio-stt modality also holds realtime-only models (OpenAI's
 * gpt-realtime family), which are reached over a WebSocket, not this endpoint.
 */
export const transcriptionsEndpoint: EndpointSpec<TranscriptionAdapter> = {
  path: '/v1/audio/transcriptions',
  modality: 'audio-stt',
  adapterOf: (model: CatalogModel) =>
    model.capabilities.includes('speech-to-text') ? adapterFor(model, 'transcription') : undefined,
  unpriced: (model: CatalogModel) =>
    model.prices.perUnitNanos?.audio_minute === undefined
      ? 'has no per-minute price, so it cannot be billed'
      : undefined,
};

export const speechEndpoint: EndpointSpec<SpeechAdapter> = {
  path: '/v1/audio/speech',
  modality: 'audio-tts',
  adapterOf: (model: CatalogModel) =>
    model.capabilities.includes('text-to-speech') ? adapterFor(model, 'speech') : undefined,
  unpriced: (model: CatalogModel) =>
    model.prices.perUnitNanos?.character === undefined
      ? 'has no per-character price, so it cannot be billed'
      : undefined,
};
