import { Readable } from 'node:stream';
import { z } from 'zod';
import type { JobAdapter, JobCall, Poll } from '../../contracts/jobs.ts';
import { fetchRemoteInput, readAll } from '../../net/remote-input.ts';
import { endpointUrl, getUpstream, postJson } from '../http.ts';
import { parseReply } from '../reply.ts';
import { googleRetryDelayMs } from './retry-info.ts';

const Operation = z.object({
  name: z.string(),
  done: z.boolean().optional(),
  error: z.object({ code: z.number().optional(), message: z.string().optional() }).optional(),
  response: z
    .object({
      generateVideoResponse: z
        .object({
          generatedSamples: z.array(z.object({ video: z.object({ uri: z.string() }) })).optional(),
          raiMediaFilteredReasons: z.array(z.string()).optional(),
        })
        .optional(),
    })
    .optional(),
});

/** Veo takes 4, 6 or 8 seconds; a request for another length gets the nearest one at or above it (8 at most). */
export function veoSeconds(duration: number | undefined): number {
  if (duration === undefined) return 8;
  return [4, 6, 8].find((s) => s >= duration) ?? 8;
}

const headers = (call: JobCall) => ({ 'x-goog-api-key': call.upstream.apiKey });

/**
 * Google's Veo through the Gemini API: `models/{model}:predictLongRunning` starts a long-running operation, the
 * operation is polled by name until `done`, and the video is downloaded from the sample's URI (on Google's own
 * host, with the key).
 */
export const veoVideos: JobAdapter = {
  heldUnits: (input) => veoSeconds(input.duration),
  async submit(call) {
    const { input, upstream } = call;
    const instance: Record<string, unknown> = { prompt: input.prompt };
    if (input.image_url) {
      const image = await fetchRemoteInput(input.image_url, 'image_url', {
        allowPrivate: call.allowPrivateUrls,
        maxBytes: 20 * 1024 * 1024,
        signal: call.signal,
      });
      instance.image = {
        bytesBase64Encoded: (await readAll(image.body)).toString('base64'),
        mimeType: image.contentType?.split(';')[0] ?? 'image/png',
      };
    }
    const parameters: Record<string, unknown> = {
      durationSeconds: veoSeconds(input.duration),
      aspectRatio: input.aspect_ratio ?? '16:9',
    };
    if (input.resolution) parameters.resolution = input.resolution;
    const response = await postJson({
      url: endpointUrl(upstream.baseUrl, `/v1beta/models/${upstream.model}:predictLongRunning`),
      headers: headers(call),
      body: { instances: [instance], parameters },
      timeoutMs: upstream.timeoutMs,
      signal: call.signal,
      retryAfterFromBody: googleRetryDelayMs,
    });
    const operation = await parseReply(response, Operation, 'an operation');
    return { kind: 'submitted', providerJobId: operation.name };
  },

  async poll(call, name): Promise<Poll> {
    const { upstream } = call;
    const response = await getUpstream({
      url: endpointUrl(upstream.baseUrl, `/v1beta/${name}`),
      headers: headers(call),
      timeoutMs: upstream.timeoutMs,
      signal: call.signal,
    });
    const operation = await parseReply(response, Operation, 'an operation');
    if (!operation.done) return { kind: 'pending' };
    if (operation.error)
      return { kind: 'failed', message: operation.error.message ?? 'the provider failed the video' };
    const generated = operation.response?.generateVideoResponse;
    const uri = generated?.generatedSamples?.[0]?.video.uri;
    if (!uri) {
      const reasons = generated?.raiMediaFilteredReasons?.join('; ');
      return {
        kind: 'failed',
        message: reasons ? `the provider filtered the video: ${reasons}` : 'no video was returned',
      };
    }
    if (new URL(uri).origin !== new URL(upstream.baseUrl).origin) {
      return { kind: 'failed', message: 'the provider returned a video on an unexpected host' };
    }
    const video = await getUpstream({
      url: uri,
      headers: headers(call),
      timeoutMs: upstream.timeoutMs,
      signal: call.signal,
    });
    return {
      kind: 'done',
      output: {
        file: { body: Readable.from(video.body), filename: 'video.mp4' },
        units: veoSeconds(call.input.duration),
        unitsReported: false,
      },
    };
  },
};
