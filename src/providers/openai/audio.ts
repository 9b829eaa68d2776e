import { FormData } from 'undici';
import { z } from 'zod';
import type { SpeechAdapter, TranscriptionAdapter } from '../../contracts/audio.ts';
import { endpointUrl } from '../http.ts';
import { postBody } from '../post-body.ts';
import { parseReply } from '../reply.ts';

/** Whisper models (OpenAI's whisper-1, Groq's whisper-large-v3*) answer verbose_json; the gpt-4o ones json or text. */
const hasTimestamps = (model: string) => /whisper/i.test(model);

const Seconds = z.number().nonnegative();
const Usage = z.object({ type: z.string(), seconds: z.unknown() }).partial().nullish().catch(undefined);
const Segment = z
  .object({
    id: z.number().int(),
    start: z.number(),
    end: z.number(),
    text: z.string(),
    seek: z.number().optional().catch(undefined),
    tokens: z.array(z.number()).optional().catch(undefined),
    temperature: z.number().optional().catch(undefined),
    avg_logprob: z.number().optional().catch(undefined),
    compression_ratio: z.number().optional().catch(undefined),
    no_speech_prob: z.number().optional().catch(undefined),
  })
  .strip();
const Reply = z.object({
  text: z.string(),
  language: z.string().optional().catch(undefined),
  duration: Seconds.optional().catch(undefined),
  segments: z.array(Segment).optional(),
  words: z.array(z.object({ word: z.string(), start: z.number(), end: z.number() }).strip()).optional(),
  usage: Usage,
});

/**
 * `POST {base}/audio/transcriptions` of OpenAI and the providers that copy it (Groq). The audio goes as a
 * file-backed multipart part, read from disk while it is sent. Whisper models are always asked for verbose_json,
 * whatever the client wants: it carries the audio's duration, which is what the call is billed by; the gateway
 * renders the client's format from it. The gpt-4o transcribers take json only and may report
 * `usage: {type: "duration", seconds}`; token usage (`type: "tokens"`) says nothing of the duration.
 */
export const openAiTranscriptions: TranscriptionAdapter = {
  timestamps: hasTimestamps,
  async transcribe({ audio, language, prompt, temperature, words, upstream, signal }) {
    const verbose = hasTimestamps(upstream.model);
    const form = new FormData();
    form.append('file', await audio.blob(), audio.filename);
    form.append('model', upstream.model);
    form.append('response_format', verbose ? 'verbose_json' : 'json');
    if (language !== undefined) form.append('language', language);
    if (prompt !== undefined) form.append('prompt', prompt);
    if (temperature !== undefined) form.append('temperature', String(temperature));
    if (verbose && words) {
      form.append('timestamp_granularities[]', 'segment');
      form.append('timestamp_granularities[]', 'word');
    }
    const response = await postBody({
      url: endpointUrl(upstream.baseUrl, '/audio/transcriptions'),
      headers: { authorization: `Bearer ${upstream.apiKey}` },
      body: form,
      timeoutMs: upstream.timeoutMs,
      signal,
    });
    const reply = await parseReply(response, Reply, 'a transcription');
    const usageSeconds =
      reply.usage?.type === 'duration' ? Seconds.safeParse(reply.usage.seconds).data : undefined;
    return {
      text: reply.text,
      language: reply.language,
      durationSeconds: reply.duration ?? usageSeconds,
      segments: reply.segments,
      words: reply.words,
    };
  },
};

/**
 * `POST {base}/audio/speech`: the audio comes back as the response body in the format asked for, and is handed on
 * unread so the gateway can stream it to the client as it arrives.
 */
export const openAiSpeech: SpeechAdapter = {
  formats: ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'],
  speed: { min: 0.25, max: 4 },
  // OpenAI refuses them itself for tts-1 and tts-1-hd.
  instructions: true,
  async speak({ input, voice, format, speed, instructions, upstream, signal }) {
    const response = await postBody({
      url: endpointUrl(upstream.baseUrl, '/audio/speech'),
      headers: { authorization: `Bearer ${upstream.apiKey}` },
      body: {
        json: {
          model: upstream.model,
          input,
          voice: voice ?? 'alloy',
          response_format: format,
          ...(speed === undefined ? {} : { speed }),
          ...(instructions === undefined ? {} : { instructions }),
        },
      },
      timeoutMs: upstream.timeoutMs,
      signal,
    });
    return response.body;
  },
};
