import type { Readable } from 'node:stream';
import type { ModalityCall } from './modality.ts';

/**
 * The contract between the audio endpoints and their provider adapters, in neutral shapes: adapters speak their
 * provider's wire format, the services render the API's responses and bill them. A figure the provider did not
 * report is `undefined`, never a zero.
 */

/** Recorded audio to transcribe, read from the blob store afresh for every attempt. */
export interface AudioSource {
  /** A name with the format's extension (OpenAI tells formats apart by it). */
  filename: string;
  contentType: string;
  bytes: number;
  /** A file-backed Blob for a multipart part. */
  blob(): Promise<Blob>;
  /** The bytes as a stream, for providers that take the audio as the request body. */
  stream(): Readable;
}

export interface TranscriptionCall extends ModalityCall {
  audio: AudioSource;
  language: string | undefined;
  prompt: string | undefined;
  temperature: number | undefined;
  /** Whether the response needs timed segments (verbose_json, srt, vtt) and words. */
  segments: boolean;
  words: boolean;
}

/** A timed piece of the transcript, in OpenAI's verbose_json shape; figures a provider does not give are absent. */
export interface TranscriptSegment {
  id: number;
  start: number;
  end: number;
  text: string;
  seek?: number;
  tokens?: number[];
  temperature?: number;
  avg_logprob?: number;
  compression_ratio?: number;
  no_speech_prob?: number;
}

export interface TranscriptWord {
  word: string;
  start: number;
  end: number;
}

export interface Transcript {
  text: string;
  language: string | undefined;
  /** The audio's length as the provider measured it (and bills it). */
  durationSeconds: number | undefined;
  segments: TranscriptSegment[] | undefined;
  words: TranscriptWord[] | undefined;
}

export interface TranscriptionAdapter {
  /** Whether the provider model gives timed segments (OpenAI's gpt-4o transcribers answer text only). */
  timestamps(providerModel: string): boolean;
  transcribe(call: TranscriptionCall): Promise<Transcript>;
}

export const SPEECH_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];

export interface SpeechCall extends ModalityCall {
  input: string;
  voice: string | undefined;
  format: SpeechFormat;
  speed: number | undefined;
  instructions: string | undefined;
}

export interface SpeechAdapter {
  /** The formats the provider can produce. */
  formats: readonly SpeechFormat[];
  /** Served when the request names none; OpenAI's `mp3` when absent. */
  defaultFormat?: SpeechFormat;
  /** The `speed` the provider accepts, inclusive. */
  speed: { min: number; max: number };
  /** Whether the provider takes style `instructions` (OpenAI's gpt-4o-mini-tts does). */
  instructions: boolean;
  /** Opens the upstream audio; resolves once the provider has accepted the request (its headers arrived). */
  speak(call: SpeechCall): Promise<AsyncIterable<Uint8Array>>;
}
