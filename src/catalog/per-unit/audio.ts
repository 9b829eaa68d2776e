import type { CapabilityId } from '../capabilities.ts';
import type { CatalogModel } from '../types.ts';
import { unitPricedModel } from '../unit-models.ts';

/**
 * Speech-to-text and text-to-speech models, priced per audio minute or per character from each provider's
 * published price page (nano-dollars per ONE unit). Where the price list already lists a model (OpenAI's whisper-1,
 * gpt-4o-transcribe, gpt-4o-mini-transcribe, gpt-4o-mini-tts; Groq's whisper models) only these per-unit prices and
 * notes are added to its entry.
 */
interface AudioModel {
  id: string;
  modality: 'audio-stt' | 'audio-tts';
  capabilities: CapabilityId[];
  /** Dollars per unit, as a decimal string. */
  perUnit: Record<string, string>;
  description: string;
  note: string;
}

const STT: CapabilityId[] = ['speech-to-text'];
/** The spec's two speech models that also transcribe live (GET /v1/realtime) and as async jobs. */
const STT_REALTIME: CapabilityId[] = ['speech-to-text', 'realtime-transcription', 'async'];
const TTS: CapabilityId[] = ['text-to-speech'];

const AUDIO_MODELS: readonly AudioModel[] = [
  {
    id: 'openai/whisper-1',
    modality: 'audio-stt',
    capabilities: STT,
    perUnit: { audio_minute: '0.006' },
    description: "OpenAI's Whisper transcription model",
    note: '$0.006 per audio minute (https://platform.openai.com/docs/pricing#transcription-and-speech)',
  },
  {
    id: 'openai/gpt-4o-transcribe',
    modality: 'audio-stt',
    capabilities: STT,
    perUnit: { audio_minute: '0.006' },
    description: "OpenAI's GPT-4o transcription model",
    note: "$0.006 per audio minute, OpenAI's per-minute figure for its token prices (https://platform.openai.com/docs/pricing#transcription-and-speech)",
  },
  {
    id: 'openai/gpt-4o-mini-transcribe',
    modality: 'audio-stt',
    capabilities: STT,
    perUnit: { audio_minute: '0.003' },
    description: "OpenAI's GPT-4o mini transcription model",
    note: "$0.003 per audio minute, OpenAI's per-minute figure for its token prices (https://platform.openai.com/docs/pricing#transcription-and-speech)",
  },
  {
    id: 'groq/whisper-large-v3',
    modality: 'audio-stt',
    capabilities: STT,
    perUnit: { audio_minute: '0.00185' },
    description: 'Whisper large v3 on Groq',
    note: '$0.111 per audio hour, at least 10 seconds billed per request (https://groq.com/pricing)',
  },
  {
    id: 'groq/whisper-large-v3-turbo',
    modality: 'audio-stt',
    capabilities: STT,
    // $0.04 an hour is 666,666.67 nano-dollars a minute: rounded up to the nano-dollar.
    perUnit: { audio_minute: '0.000666667' },
    description: 'Whisper large v3 turbo on Groq',
    note: '$0.04 per audio hour, at least 10 seconds billed per request (https://groq.com/pricing)',
  },
  {
    id: 'deepgram/nova-3',
    modality: 'audio-stt',
    capabilities: STT_REALTIME,
    perUnit: { audio_minute: '0.0043', audio_minute_realtime: '0.0077' },
    description: "Deepgram's Nova-3 speech-to-text model (pre-recorded and streaming)",
    note: 'pay-as-you-go $0.0043 per minute pre-recorded, $0.0077 per minute streaming, monolingual (https://deepgram.com/pricing)',
  },
  {
    id: 'deepgram/nova-2',
    modality: 'audio-stt',
    capabilities: STT_REALTIME,
    perUnit: { audio_minute: '0.0043', audio_minute_realtime: '0.0058' },
    description: "Deepgram's Nova-2 speech-to-text model (pre-recorded and streaming)",
    note: 'pay-as-you-go $0.0043 per minute pre-recorded, $0.0058 per minute streaming (https://deepgram.com/pricing)',
  },
  {
    id: 'openai/tts-1',
    modality: 'audio-tts',
    capabilities: TTS,
    perUnit: { character: '0.000015' },
    description: "OpenAI's text-to-speech model, optimised for speed",
    note: '$15 per million characters (https://platform.openai.com/docs/pricing#transcription-and-speech)',
  },
  {
    id: 'openai/tts-1-hd',
    modality: 'audio-tts',
    capabilities: TTS,
    perUnit: { character: '0.00003' },
    description: "OpenAI's text-to-speech model, optimised for quality",
    note: '$30 per million characters (https://platform.openai.com/docs/pricing#transcription-and-speech)',
  },
  {
    id: 'openai/gpt-4o-mini-tts',
    modality: 'audio-tts',
    capabilities: TTS,
    perUnit: { character: '0.000017' },
    description: "OpenAI's GPT-4o mini text-to-speech model",
    note: 'OpenAI bills tokens ($0.60/M text in, $12/M audio out) and estimates $0.015 per minute of speech; at ~900 characters a minute that is $16.67 per million characters, billed as $17 (https://platform.openai.com/docs/pricing#transcription-and-speech)',
  },
  ...(
    [
      ['eleven_multilingual_v2', '0.0001', 'Multilingual v2', '$0.10'],
      ['eleven_v3', '0.0001', 'v3', '$0.10'],
      ['eleven_flash_v2_5', '0.00005', 'Flash v2.5', '$0.05'],
      ['eleven_turbo_v2_5', '0.00005', 'Turbo v2.5', '$0.05'],
    ] as const
  ).map(
    ([name, price, label, per1k]): AudioModel => ({
      id: `elevenlabs/${name}`,
      modality: 'audio-tts',
      capabilities: TTS,
      perUnit: { character: price },
      description: `ElevenLabs ${label} text-to-speech model`,
      note: `${per1k} per 1,000 characters (https://elevenlabs.io/pricing/api)`,
    }),
  ),
];

export const audioModels: readonly CatalogModel[] = AUDIO_MODELS.map((model) =>
  unitPricedModel({ ...model, perUnitDollars: model.perUnit }),
);
