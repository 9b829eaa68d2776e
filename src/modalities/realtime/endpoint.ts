import type { WebSocket } from 'ws';
import type { CatalogModel } from '../../catalog/types.ts';
import { RequestRefused } from '../../contracts/errors.ts';
import {
  closeFailure,
  type LiveMessage,
  type LiveOptions,
  openLive,
  parseLiveMessage,
} from '../../providers/deepgram/live.ts';
import type { UpstreamError } from '../../providers/errors.ts';
import { findModel } from '../extra-models.ts';
import { type EndpointSpec, type ModalityTarget, type ModelSource, resolveModalityModel } from '../models.ts';
import type { ModalityUpstream } from '../types.ts';
import { realtimeRate } from './pricing.ts';

/** A provider's live transcription stream: how to open it and how to read what it sends. */
export interface LiveAdapter {
  open(upstream: ModalityUpstream, options: LiveOptions, signal: AbortSignal): Promise<WebSocket>;
  parse(text: string): LiveMessage;
  /** The stream ended without its closing summary. */
  closeFailure(code: number, reason: string): UpstreamError;
  /** The text message that asks the provider to finish and summarise; `KeepAlive` and `Finalize` pass through. */
  closeMessage: string;
}

const deepgramLive: LiveAdapter = {
  open: openLive,
  parse: parseLiveMessage,
  closeFailure,
  closeMessage: JSON.stringify({ type: 'CloseStream' }),
};

export const REALTIME_CAPABILITY = 'realtime-transcription';
const ADAPTERS: Readonly<Record<string, LiveAdapter>> = { deepgram: deepgramLive };

export const PREFERRED_REALTIME_MODELS = ['deepgram/nova-3'];

export const realtimeEndpoint: EndpointSpec<LiveAdapter> = {
  path: '/v1/realtime',
  modality: 'audio-stt',
  adapterOf: (model: CatalogModel) =>
    model.capabilities.includes(REALTIME_CAPABILITY) ? ADAPTERS[model.provider] : undefined,
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
