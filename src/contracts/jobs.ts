import type { Readable } from 'node:stream';
import type { ModalityUpstream } from './modality.ts';

/** What a job asks for, validated (the AsyncJobRequest of the API, or a transcription's audio). */
export interface JobInput {
  prompt?: string;
  duration?: number;
  aspect_ratio?: string;
  resolution?: string;
  image_url?: string;
  lyrics?: string;
  is_instrumental?: boolean;
  /** Transcription: the audio, copied into the job's own place in the blob store at submission. */
  audio_key?: string;
  audio_filename?: string;
  audio_content_type?: string;
  audio_bytes?: number;
  /** Seconds held at submission (from a WAV header, or the size at a low bitrate). */
  hold_seconds?: number;
  language?: string;
}

/** The part of the blob store a job's adapter reads its stored inputs through (the files service implements it). */
export interface JobBlobs {
  read(key: string): Readable;
  blob(key: string, type?: string): Promise<Blob>;
  remove(key: string): Promise<void>;
}

export interface JobCall {
  upstream: ModalityUpstream;
  input: JobInput;
  signal: AbortSignal;
  /** Whether URLs the provider hands back may point at private addresses (tests). */
  allowPrivateUrls: boolean;
  /** Stored inputs (a transcription's audio). */
  blobs: JobBlobs;
}

/** A finished job's output: a file to store, or a structured result (a transcript), and what it is billed as. */
export interface JobOutput {
  file?: { body: Readable | AsyncIterable<Uint8Array>; filename: string };
  result?: Record<string, unknown>;
  /** Billed units of the model's unit (seconds of video or music, models, audio minutes). */
  units: number;
  /** Whether the provider reported the units (else they are the request's own figure). */
  unitsReported: boolean;
}

export type Submission = { kind: 'submitted'; providerJobId: string } | { kind: 'done'; output: JobOutput };

export type Poll =
  | { kind: 'pending' }
  | { kind: 'done'; output: JobOutput }
  | { kind: 'failed'; message: string };

/**
 * A provider's asynchronous API: submit the work (some providers answer at once, which ends the job there), then
 * poll it by the provider's id. `cancel` is best effort.
 */
export interface JobAdapter {
  /** Units the request will use at most, by the provider's own rounding (Veo renders 4, 6 or 8 seconds): the hold. */
  heldUnits(input: JobInput): number;
  submit(call: JobCall): Promise<Submission>;
  poll?(call: JobCall, providerJobId: string): Promise<Poll>;
  cancel?(call: JobCall, providerJobId: string): Promise<void>;
}
