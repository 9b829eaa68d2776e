import { dollarsPerMillion } from '../contracts/money.ts';
import type { CatalogModel } from './types.ts';

const LOCAL_QUIRKS = {
  reasoning: false,
  noSampling: false,
  nativeFormat: null,
  maxTokensField: 'max_tokens',
} as const;

interface LocalMediaSpec {
  name: string;
  modality: CatalogModel['modality'];
  capabilities: string[];
  /** Dollars per ONE unit, keyed by the unit, as the hosted model it is priced like. */
  perUnit: Record<string, string>;
  description: string;
  note: string;
}

/**
 * Test models of the media endpoints, so that images, speech and transcription can be tried end to end with no key
 * (src/providers/local: images.ts, speech.ts, transcribe.ts). Each is priced like the small hosted model it stands
 * in for, so that holds, charges and budgets behave as they would upstream.
 */
const SPECS: readonly LocalMediaSpec[] = [
  {
    name: 'image',
    modality: 'image',
    capabilities: ['image-generation', 'image-editing'],
    perUnit: {
      'image:256x256:standard': '0.016',
      'image:512x512:standard': '0.018',
      'image:1024x1024:standard': '0.02',
    },
    description:
      'Test model: draws a real PNG (a gradient and a pattern) from a hash of the prompt; no key, deterministic',
    note: 'a test model, priced like openai/dall-e-2: $0.016 / $0.018 / $0.020 per 256, 512 and 1024 px square image',
  },
  {
    name: 'speech',
    modality: 'audio-tts',
    capabilities: ['text-to-speech'],
    perUnit: { character: '0.000015' },
    description:
      'Test model: speaks the input as a tune of notes (WAV or 24 kHz PCM) that local/transcribe reads back; no key',
    note: 'a test model, priced like openai/tts-1: $15 per million characters',
  },
  {
    name: 'transcribe',
    modality: 'audio-stt',
    capabilities: ['speech-to-text', 'async'],
    perUnit: { audio_minute: '0.006' },
    description:
      "Test model: reads local/speech's audio back to its text; other WAV files as [audio of N seconds]; no key",
    note: 'a test model, priced like openai/whisper-1: $0.006 per audio minute, billed by the second',
  },
];

function entry(spec: LocalMediaSpec): CatalogModel {
  return {
    id: `local/${spec.name}`,
    provider: 'local',
    providerModelId: spec.name,
    name: spec.name,
    api: 'local',
    modality: spec.modality,
    contextWindow: null,
    maxOutputTokens: null,
    prices: {
      inputNanosPerMillion: null,
      outputNanosPerMillion: null,
      cachedInputNanosPerMillion: null,
      cacheWriteNanosPerMillion: null,
      // dollarsPerMillion turns "$X" into nano-dollars whatever the unit: the figure is per one unit here.
      perUnitNanos: Object.fromEntries(
        Object.entries(spec.perUnit).map(([unit, dollars]) => [unit, dollarsPerMillion(dollars)]),
      ),
    },
    priceNotes: [spec.note],
    capabilities: spec.capabilities,
    quirks: LOCAL_QUIRKS,
    deprecated: false,
    description: spec.description,
  };
}

export const localMediaModels: readonly CatalogModel[] = SPECS.map(entry);
