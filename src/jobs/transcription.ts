import { permitModel } from '../accounts/model-access.ts';
import type { TranscriptionAdapter } from '../contracts/audio.ts';
import { RequestRefused } from '../contracts/errors.ts';
import type { JobAdapter, JobCall } from '../contracts/jobs.ts';
import type { BlobStore } from '../files/blob-store.ts';
import { safeFilename } from '../files/upload.ts';
import { contentTypeOf } from '../media/signed-urls.ts';
import {
  audioSecondsLine,
  billedSeconds,
  estimatedSeconds,
  holdSeconds,
  maxAudioBytes,
} from '../modalities/audio/pricing.ts';
import type { TranscribeRequest } from '../modalities/audio/transcription.ts';
import { readHead, wavSeconds } from '../modalities/audio/wav.ts';
import { fetchRemoteInput, tooLarge } from '../net/remote-input.ts';
import { allowPrivateUrls } from '../net/url-guard.ts';
import type { RequestContext } from '../pipeline/priced.ts';
import { adapterFor } from '../providers/registry.ts';
import { checkWebhookUrl } from '../webhooks/url.ts';
import type { JobKind } from './kinds.ts';
import { type JobAccepted, type JobsDeps, newJobId, queueJob, resolveJobModel } from './service.ts';

/** A provider's transcription API run as a job: the call answers the transcript, which ends the job at once. */
function asJob(adapter: TranscriptionAdapter): JobAdapter {
  return {
    heldUnits: (input) => input.hold_seconds ?? 1,
    async submit(call: JobCall) {
      const { input, blobs } = call;
      const key = input.audio_key;
      if (!key || input.audio_bytes === undefined) throw new Error('a transcription job without its audio');
      const contentType = input.audio_content_type ?? contentTypeOf(input.audio_filename ?? 'audio');
      const transcript = await adapter.transcribe({
        audio: {
          filename: input.audio_filename ?? 'audio',
          contentType,
          bytes: input.audio_bytes,
          blob: () => blobs.blob(key, contentType),
          stream: () => blobs.read(key),
        },
        language: input.language,
        prompt: undefined,
        temperature: undefined,
        segments: adapter.timestamps(call.upstream.model),
        words: false,
        upstream: {
          ...call.upstream,
          timeoutMs: call.upstream.timeoutMs + Math.ceil(input.audio_bytes / 100_000) * 1000,
        },
        signal: call.signal,
      });
      const reported = transcript.durationSeconds;
      const header = wavSeconds(await readHead(blobs.read(key)), input.audio_bytes);
      const seconds = reported ?? estimatedSeconds(input.audio_bytes, header);
      await blobs.remove(key);
      return {
        kind: 'done',
        output: {
          result: {
            transcript: { text: transcript.text, segments: transcript.segments ?? [] },
            language: transcript.language ?? null,
            duration: seconds,
          },
          units: seconds,
          unitsReported: reported !== undefined,
        },
      };
    },
  };
}

/**
 * Asynchronous transcription: the models the catalog marks `async` (Deepgram's Nova-3 and Nova-2), run by the job
 * worker through the same provider adapters as the synchronous endpoint, billed per second at the per-minute price.
 */
export const transcriptionKind: JobKind = {
  modality: 'transcription',
  catalogModality: 'audio-stt',
  path: '/v1/audio/transcriptions',
  defaultModel: 'deepgram/nova-3',
  unit: 'audio_minute',
  adapterOf: (model) => {
    const adapter = adapterFor(model, 'transcription');
    return adapter && asJob(adapter);
  },
  refuse: (model) =>
    model.capabilities.includes('async')
      ? undefined
      : 'does not transcribe asynchronously; use a model listed with the async capability (deepgram/nova-3, deepgram/nova-2)',
  lines: (model, seconds) => [audioSecondsLine(model, billedSeconds(model, seconds))],
};

/**
 * Accepts `POST /v1/audio/transcriptions` with `async: true` or a `webhook_url`: the audio is copied into the job's
 * own place in the blob store (an upload) or fetched there through the URL guard (an `audio_url`, so an
 * unreachable URL is still the client's 400 now, not a failed job later), then the job is held and queued.
 */
export async function submitTranscriptionJob(
  deps: JobsDeps & { blobs: BlobStore },
  context: RequestContext,
  request: TranscribeRequest,
  webhookUrl: string | undefined,
): Promise<JobAccepted> {
  const target = resolveJobModel(deps, transcriptionKind, request.model);
  // Before the audio is stored: nothing is done for a model the key may not use.
  permitModel(deps.spending.allowedModels(context.auth), target.model.id, {
    ...(request.model && { named: request.model }),
  });
  if (webhookUrl) await checkWebhookUrl(webhookUrl, deps.env);
  const jobId = newJobId();
  const maxBytes = maxAudioBytes(deps.env);
  let filename: string;
  let contentType: string | undefined;
  let source: NodeJS.ReadableStream | AsyncIterable<Uint8Array>;
  const field = request.audio.field ?? ('blobKey' in request.audio ? 'file' : 'audio_url');
  if ('blobKey' in request.audio) {
    filename = safeFilename(request.audio.filename ?? request.audio.blobKey.split('/').pop(), 'audio');
    contentType = request.audio.contentType;
    source = deps.blobs.read(request.audio.blobKey);
  } else {
    const remote = await fetchRemoteInput(request.audio.url, field, {
      allowPrivate: allowPrivateUrls(deps.env),
      maxBytes,
      signal: context.signal,
    });
    filename = safeFilename(new URL(request.audio.url).pathname.split('/').pop(), 'audio');
    contentType = remote.contentType?.split(';')[0]?.trim();
    source = remote.body;
  }
  const key = `jobs/${jobId}/input/${filename}`;
  const stored = await deps.blobs.write(key, source as AsyncIterable<Uint8Array>, {
    maxBytes,
    tooLarge: () => tooLarge(field, maxBytes),
  });
  try {
    if (stored.bytes === 0) throw new RequestRefused('invalid', `'${field}': the audio is empty`);
    const header = wavSeconds(await readHead(deps.blobs.read(key)), stored.bytes);
    return await queueJob(
      deps,
      context,
      transcriptionKind,
      target,
      jobId,
      {
        audio_key: key,
        audio_filename: filename,
        audio_content_type:
          contentType && contentType !== 'application/octet-stream' ? contentType : undefined,
        audio_bytes: stored.bytes,
        hold_seconds: holdSeconds(stored.bytes, header),
        language: request.language,
      },
      webhookUrl,
    );
  } catch (error) {
    await deps.blobs.remove(key);
    throw error;
  }
}
