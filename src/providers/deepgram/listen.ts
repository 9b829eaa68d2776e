import { z } from 'zod';
import type { TranscriptionAdapter, TranscriptSegment } from '../../contracts/audio.ts';
import { postBody } from '../post-body.ts';
import { parseReply } from '../reply.ts';
import { deepgramEndpoint, deepgramError } from './api.ts';

const Word = z.object({
  word: z.string(),
  start: z.number(),
  end: z.number(),
  punctuated_word: z.string().optional().catch(undefined),
});
const Reply = z.object({
  metadata: z.object({ duration: z.number().nonnegative().optional().catch(undefined) }),
  results: z.object({
    channels: z
      .array(
        z.object({
          detected_language: z.string().optional().catch(undefined),
          alternatives: z
            .array(z.object({ transcript: z.string(), words: z.array(Word).optional().catch(undefined) }))
            .min(1),
        }),
      )
      .min(1),
    utterances: z
      .array(z.object({ start: z.number(), end: z.number(), transcript: z.string() }))
      .optional()
      .catch(undefined),
  }),
});

/**
 * Deepgram's pre-recorded `POST /v1/listen`: the audio is the request body (streamed from the blob store, with its
 * Content-Type), options go in the query. Punctuation is always asked for, as OpenAI's transcripts are punctuated;
 * utterances when the client wants segments; language detection when it names no language. The transcript is
 * the first alternative of the first channel, and `metadata.duration` is what Deepgram bills. `prompt` and
 * `temperature` have no Deepgram counterpart and are not sent.
 */
export const deepgramListen: TranscriptionAdapter = {
  timestamps: () => true,
  async transcribe({ audio, language, segments, words, upstream, signal }) {
    const query = new URLSearchParams({ model: upstream.model, punctuate: 'true' });
    if (language !== undefined) query.set('language', language);
    else query.set('detect_language', 'true');
    if (segments) query.set('utterances', 'true');
    const endpoint = deepgramEndpoint(upstream, '/v1/listen');
    const response = await postBody({
      url: `${endpoint.url}?${query}`,
      headers: { ...endpoint.headers, 'content-type': audio.contentType },
      body: audio.stream(),
      contentLength: audio.bytes,
      timeoutMs: upstream.timeoutMs,
      signal,
      errorMessage: deepgramError,
    });
    const reply = await parseReply(response, Reply, 'a transcript');
    const [channel] = reply.results.channels;
    const best = channel?.alternatives[0];
    const text = best?.transcript ?? '';
    const duration = reply.metadata.duration;
    return {
      text,
      language: language ?? channel?.detected_language,
      durationSeconds: duration,
      segments: segments ? segmentsOf(reply.results.utterances, text, duration) : undefined,
      words: words
        ? (best?.words ?? []).map((w) => ({ word: w.punctuated_word ?? w.word, start: w.start, end: w.end }))
        : undefined,
    };
  },
};

/** Utterances as OpenAI's segments; without them, the whole transcript as one segment. */
function segmentsOf(
  utterances: { start: number; end: number; transcript: string }[] | undefined,
  text: string,
  duration: number | undefined,
): TranscriptSegment[] {
  if (utterances && utterances.length > 0) {
    return utterances.map((u, id) => ({ id, start: u.start, end: u.end, text: u.transcript }));
  }
  return text ? [{ id: 0, start: 0, end: duration ?? 0, text }] : [];
}
