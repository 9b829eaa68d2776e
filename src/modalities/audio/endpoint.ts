import type { CatalogModel } from '../../catalog/types.ts';
import { deepgramListen } from '../../providers/deepgram/listen.ts';
import { elevenLabsSpeech } from '../../providers/elevenlabs/speech.ts';
import { openAiSpeech, openAiTranscriptions } from '../../providers/openai/audio.ts';
import type { EndpointSpec } from '../models.ts';
import type { SpeechAdapter, TranscriptionAdapter } from './types.ts';

const TRANSCRIPTION_ADAPTERS: Readonly<Record<string, TranscriptionAdapter>> = {
  openai: openAiTranscriptions,
  groq: openAiTranscriptions,
  deepgram: deepgramListen,
};

const SPEECH_ADAPTERS: Readonly<Record<string, SpeechAdapter>> = {
  openai: openAiSpeech,
  elevenlabs: elevenLabsSpeech,
};

/**
 * Only models with a speech-to-text capability: the audio-stt modality also holds realtime-only models (OpenAI's
 * gpt-realtime family), which are reached over a WebSocket, not this endpoint.
 */
export const transcriptionsEndpoint: EndpointSpec<TranscriptionAdapter> = {
  path: '/v1/audio/transcriptions',
  modality: 'audio-stt',
  adapterOf: (model: CatalogModel) =>
    model.capabilities.includes('speech-to-text') ? TRANSCRIPTION_ADAPTERS[model.provider] : undefined,
  unpriced: (model: CatalogModel) =>
    model.prices.perUnitNanos?.audio_minute === undefined
      ? 'has no per-minute price, so it cannot be billed'
      : undefined,
};

export const speechEndpoint: EndpointSpec<SpeechAdapter> = {
  path: '/v1/audio/speech',
  modality: 'audio-tts',
  adapterOf: (model: CatalogModel) =>
    model.capabilities.includes('text-to-speech') ? SPEECH_ADAPTERS[model.provider] : undefined,
  unpriced: (model: CatalogModel) =>
    model.prices.perUnitNanos?.character === undefined
      ? 'has no per-character price, so it cannot be billed'
      : undefined,
};
