import type { FastifyRequest } from 'fastify';
import { RequestRefused } from '../../contracts/errors.ts';
import type { BlobStore } from '../../files/blob-store.ts';
import type { ReadMultipart } from '../../files/upload.ts';
import { maxAudioBytes } from './pricing.ts';
import { parseInput, TranscriptionForm, TranscriptionJson } from './request.ts';
import type { TranscribeRequest } from './transcription.ts';

export interface ReceivedTranscription {
  request: TranscribeRequest;
  /** `async: true` or a `webhook_url`: the client asked for a job rather than an answer. */
  async: boolean;
  webhookUrl: string | undefined;
  /** Removes the uploaded file, if any (once the request no longer needs it). */
  discard(): Promise<void>;
}

const noStream = (stream: boolean | undefined) => {
  if (stream) {
    throw new RequestRefused('invalid', "'stream': streamed transcription is not supported");
  }
};

/**
 * A transcription request in either shape: multipart (the `file` part streamed to the blob store within the
 * upload limit, a 413 naming `file` past it) or JSON with `audio_url` (fetched later, by the service).
 */
export async function receiveTranscription(
  request: FastifyRequest,
  blobs: BlobStore,
  env: NodeJS.ProcessEnv,
  receiveMultipart: ReadMultipart,
): Promise<ReceivedTranscription> {
  if (request.isMultipart()) {
    const form = await receiveMultipart(request, blobs, { files: { file: maxAudioBytes(env) } });
    try {
      const fields = parseInput(TranscriptionForm, form.fields);
      const file = form.files.file;
      if (!file) throw new RequestRefused('invalid', "'file': required (the audio to transcribe)");
      noStream(fields.stream);
      return {
        request: {
          model: fields.model,
          audio: { blobKey: file.key, filename: file.filename, contentType: file.mimetype, field: 'file' },
          language: fields.language,
          prompt: fields.prompt,
          temperature: fields.temperature,
          responseFormat: fields.response_format,
          words: fields['timestamp_granularities[]'] !== undefined,
        },
        async: fields.async === true || fields.webhook_url !== undefined,
        webhookUrl: fields.webhook_url,
        discard: form.discard,
      };
    } catch (error) {
      await form.discard();
      throw error;
    }
  }
  const body = parseInput(TranscriptionJson, request.body ?? undefined);
  noStream(body.stream);
  return {
    request: {
      model: body.model,
      audio: { url: body.audio_url, field: 'audio_url' },
      language: body.language,
      prompt: body.prompt,
      temperature: body.temperature,
      responseFormat: body.response_format,
      words: body.timestamp_granularities?.includes('word') ?? false,
    },
    async: body.async === true || body.webhook_url !== undefined,
    webhookUrl: body.webhook_url,
    discard: async () => {},
  };
}
