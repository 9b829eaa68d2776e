import type { SpeechAdapter, TranscriptionAdapter } from './audio.ts';
import type { ChatAdapter } from './chat.ts';
import type { DetectionAdapter } from './detections.ts';
import type { ImagesAdapter } from './images.ts';
import type { JobAdapter } from './jobs.ts';
import type { NativeMessagesAdapter } from './messages.ts';
import type { EmbeddingsAdapter, ModerationsAdapter, RerankAdapter } from './modality.ts';
import type { OcrAdapter } from './ocr.ts';
import type { LiveAdapter } from './realtime.ts';
import type { TranslationAdapter } from './translations.ts';

/**
 * Every capability a provider can serve, with the contract its adapter implements. Features ask the provider
 * registry for `adapterFor(model, capability)` and never name a provider.
 */
export interface Adapters {
  chat: ChatAdapter;
  /** The provider's own Messages format, passed through (Anthropic). */
  messages: NativeMessagesAdapter;
  embeddings: EmbeddingsAdapter;
  moderations: ModerationsAdapter;
  rerank: RerankAdapter;
  images: ImagesAdapter;
  transcription: TranscriptionAdapter;
  speech: SpeechAdapter;
  realtime: LiveAdapter;
  ocr: OcrAdapter;
  detections: DetectionAdapter;
  translations: TranslationAdapter;
  video: JobAdapter;
  music: JobAdapter;
  '3d': JobAdapter;
}

export type Capability = keyof Adapters;
