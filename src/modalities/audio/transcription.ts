import { randomUUID } from 'node:crypto';
import type { AudioSource } from '../../contracts/audio.ts';
import { RequestRefused } from '../../contracts/errors.ts';
import type { BlobStore } from '../../files/blob-store.ts';
import { safeFilename } from '../../files/upload.ts';
import { contentTypeOf } from '../../media/signed-urls.ts';
import { fetchRemoteInput, tooLarge } from '../../net/remote-input.ts';
import { allowPrivateUrls } from '../../net/url-guard.ts';
import { type ModalityDeps, pricedCall, type RequestContext, type Served } from '../../pipeline/priced.ts';
import { resolveModalityModel } from '../models.ts';
import { transcriptionsEndpoint } from './endpoint.ts';
import { audioSecondsLine, billedSeconds, estimatedSeconds, holdSeconds, maxAudioBytes } from './pricing.ts';
import type { TranscriptFormat } from './request.ts';
import type { BilledTranscript } from './transcripts.ts';
import { readHead, wavSeconds } from './wav.ts';

export interface AudioDeps extends ModalityDeps {
  blobs: BlobStore;
}

/**
 * The audio to transcribe: bytes already in the blob store (an upload; the caller keeps and removes them), or a
 * client's URL, fetched through the URL guard into the blob store for the call and removed after it.
 */
export type AudioInput =
  | { blobKey: string; filename?: string; contentType?: string; field?: string }
  | { url: string; field?: string };

export interface TranscribeRequest {
  model: string;
  audio: AudioInput;
  language?: string;
  prompt?: string;
  temperature?: number;
  /** The shape the transcript is wanted in (json by default): verbose_json, srt and vtt need timed segments. */
  responseFormat?: TranscriptFormat;
  /** Word timings (verbose_json only). */
  words?: boolean;
}

const EXTENSIONS: Readonly<Record<string, string>> = {
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/wave': 'wav',
  'audio/mpeg': 'mp3',
  'audio/mp3': 'mp3',
  'audio/mp4': 'm4a',
  'audio/x-m4a': 'm4a',
  'audio/ogg': 'ogg',
  'audio/opus': 'ogg',
  'audio/webm': 'webm',
  'audio/flac': 'flac',
  'audio/x-flac': 'flac',
  'audio/aac': 'aac',
  'video/mp4': 'mp4',
  'video/webm': 'webm',
};

/**
 * Transcribes recorded audio, billed per second of it: the hold is sized from the bytes (or a WAV header's exact
 * duration), the charge from the duration the provider reports, or the gateway's estimate (marked) when it reports
 * none. Used by POST /v1/audio/transcriptions and meant for the async transcription worker too.
 */
export async function transcribe(
  deps: AudioDeps,
  context: RequestContext,
  request: TranscribeRequest,
): Promise<Served<BilledTranscript>> {
  const target = resolveModalityModel(deps, transcriptionsEndpoint, request.model);
  const format = request.responseFormat ?? 'json';
  const segments = format === 'verbose_json' || format === 'srt' || format === 'vtt';
  if (segments && !target.adapter.timestamps(target.upstream.model)) {
    throw new RequestRefused(
      'invalid',
      `'response_format': ${target.model.id} answers json or text only (no timed segments for ${format})`,
    );
  }
  const { audio, cleanup } = await audioSource(deps, context, request.audio);
  try {
    if (audio.source.bytes === 0) {
      throw new RequestRefused(
        'invalid',
        `'${request.audio.field ?? fieldOf(request.audio)}': the audio is empty`,
      );
    }
    const header = wavSeconds(await readHead(deps.blobs.read(audio.key)), audio.source.bytes);
    const estimate = estimatedSeconds(audio.source.bytes, header);
    const model = target.model;
    return await pricedCall(
      deps,
      context,
      target,
      [audioSecondsLine(model, holdSeconds(audio.source.bytes, header))],
      async (upstream): Promise<BilledTranscript> => {
        const transcript = await target.adapter.transcribe({
          audio: audio.source,
          language: request.language,
          prompt: request.prompt,
          temperature: request.temperature,
          segments,
          words: format === 'verbose_json' && request.words === true,
          upstream: {
            ...upstream,
            timeoutMs: headersTimeout(upstream.timeoutMs, audio.source.bytes),
          },
          signal: context.signal,
        });
        const reported = transcript.durationSeconds;
        return {
          ...transcript,
          durationSeconds: reported ?? round(estimate),
          durationEstimated: reported === undefined,
        };
      },
      (transcript) => ({
        lines: [audioSecondsLine(model, transcript.durationSeconds)],
        usageReported: !transcript.durationEstimated,
        units: billedSeconds(model, transcript.durationSeconds),
      }),
    );
  } finally {
    await cleanup();
  }
}

/**
 * The wait for a transcript's response headers: the configured timeout, plus a second per 100 KB of audio, as the
 * upload and the provider's work both grow with the file (a 25 MB file may take minutes).
 */
const headersTimeout = (timeoutMs: number, bytes: number) => timeoutMs + Math.ceil(bytes / 100_000) * 1000;

const fieldOf = (input: AudioInput) => ('blobKey' in input ? 'file' : 'audio_url');
const round = (seconds: number) => Math.round(seconds * 1000) / 1000;

async function audioSource(
  deps: AudioDeps,
  context: RequestContext,
  input: AudioInput,
): Promise<{ audio: { key: string; source: AudioSource }; cleanup: () => Promise<void> }> {
  if ('blobKey' in input) {
    const bytes = await deps.blobs.size(input.blobKey);
    if (bytes === undefined) throw new Error(`no stored audio under ${input.blobKey}`);
    const filename = withExtension(
      safeFilename(input.filename ?? input.blobKey.split('/').pop(), 'audio'),
      input.contentType,
    );
    const source = sourceOf(deps.blobs, input.blobKey, filename, input.contentType, bytes);
    return { audio: { key: input.blobKey, source }, cleanup: async () => {} };
  }
  const field = input.field ?? 'audio_url';
  const maxBytes = maxAudioBytes(deps.env);
  const remote = await fetchRemoteInput(input.url, field, {
    allowPrivate: allowPrivateUrls(deps.env),
    maxBytes,
    signal: context.signal,
  });
  const type = remote.contentType?.split(';')[0]?.trim().toLowerCase();
  const filename = withExtension(safeFilename(new URL(input.url).pathname.split('/').pop(), 'audio'), type);
  const key = `audio/${randomUUID()}/${filename}`;
  const stored = await deps.blobs.write(key, remote.body, {
    maxBytes,
    tooLarge: () => tooLarge(field, maxBytes),
  });
  const source = sourceOf(deps.blobs, key, filename, type, stored.bytes);
  return { audio: { key, source }, cleanup: () => deps.blobs.remove(key) };
}

/** OpenAI tells audio formats apart by the file name's extension: one is added from the content type if missing. */
function withExtension(filename: string, contentType: string | undefined): string {
  if (/\.[A-Za-z0-9]{2,5}$/.test(filename)) return filename;
  const extension = contentType ? EXTENSIONS[contentType] : undefined;
  return extension ? `${filename}.${extension}` : filename;
}

function sourceOf(
  blobs: BlobStore,
  key: string,
  filename: string,
  declaredType: string | undefined,
  bytes: number,
): AudioSource {
  const known = declaredType && declaredType !== 'application/octet-stream' ? declaredType : undefined;
  const contentType = known ?? contentTypeOf(filename);
  return {
    filename,
    contentType,
    bytes,
    blob: () => blobs.blob(key, contentType),
    stream: () => blobs.read(key),
  };
}
