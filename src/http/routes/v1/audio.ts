import { Readable } from 'node:stream';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import type { BlobStore } from '../../../files/blob-store.ts';
import type { JobsDeps } from '../../../jobs/service.ts';
import { submitTranscriptionJob } from '../../../jobs/transcription.ts';
import { receiveTranscription } from '../../../modalities/audio/receive.ts';
import { SpeechRequest } from '../../../modalities/audio/request.ts';
import { createSpeech } from '../../../modalities/audio/speech.ts';
import { type AudioDeps, transcribe } from '../../../modalities/audio/transcription.ts';
import { renderTranscript } from '../../../modalities/audio/transcripts.ts';
import { callContext, servedHeaders } from '../../served.ts';
import { receiveMultipart, TAKES_FILES } from '../../uploads.ts';

export const audioRoutes =
  (deps: AudioDeps, live: LiveAccounts, jobs: JobsDeps & { blobs: BlobStore }): FastifyPluginAsyncZod =>
  async (app) => {
    // Multipart or JSON: the body is read and checked by receiveTranscription, not by a route schema.
    app.post('/audio/transcriptions', { config: TAKES_FILES }, async (request, reply) => {
      const context = callContext(request, reply, live);
      const received = await receiveTranscription(request, deps.blobs, deps.env, receiveMultipart);
      try {
        // `async: true` or a `webhook_url`: the audio is copied into the job and the upload discarded as usual.
        if (received.async) {
          const accepted = await submitTranscriptionJob(jobs, context, received.request, received.webhookUrl);
          return reply.code(202).send(accepted);
        }
        const served = await transcribe(deps, context, received.request);
        servedHeaders(reply, served);
        const rendered = renderTranscript(served.result, received.request.responseFormat ?? 'json');
        return reply.type(rendered.contentType).send(rendered.body);
      } finally {
        await received.discard();
      }
    });

    app.post('/audio/speech', { schema: { body: SpeechRequest } }, async (request, reply) => {
      const served = await createSpeech(deps, callContext(request, reply, live), request.body);
      servedHeaders(reply, served);
      // Billed already; the provider's bytes go on to the client as they arrive.
      return reply.type(served.result.contentType).send(Readable.from(served.result.audio));
    });
  };
