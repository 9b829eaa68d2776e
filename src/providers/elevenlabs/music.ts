import { Readable } from 'node:stream';
import type { JobAdapter } from '../../contracts/jobs.ts';
import { endpointUrl, postJson } from '../http.ts';

/** ElevenLabs composes 3 s to 5 min; the gateway asks for 30 s unless told. */
export const MUSIC_DEFAULT_SECONDS = 30;
export const MUSIC_MAX_SECONDS = 300;

export function musicSeconds(duration: number | undefined): number {
  return Math.min(MUSIC_MAX_SECONDS, Math.max(3, Math.ceil(duration ?? MUSIC_DEFAULT_SECONDS)));
}

/**
 * ElevenLabs' `POST /v1/music` (compose): answers the finished track's MP3 bytes in the response, so the job ends
 * at submission. Lyrics have no field of their own in prompt mode; they are given to the prompt, as ElevenLabs
 * documents for prompt-only composition.
 */
export const elevenLabsMusic: JobAdapter = {
  heldUnits: (input) => musicSeconds(input.duration),
  async submit(call) {
    const { input, upstream } = call;
    const seconds = musicSeconds(input.duration);
    const prompt = input.lyrics ? `${input.prompt}\n\nLyrics:\n${input.lyrics}` : input.prompt;
    const response = await postJson({
      url: endpointUrl(upstream.baseUrl, '/v1/music?output_format=mp3_44100_128'),
      headers: { 'xi-api-key': upstream.apiKey },
      body: {
        prompt,
        model_id: upstream.model,
        music_length_ms: seconds * 1000,
        ...(input.is_instrumental === undefined ? {} : { force_instrumental: input.is_instrumental }),
      },
      timeoutMs: upstream.timeoutMs,
      signal: call.signal,
    });
    return {
      kind: 'done',
      output: {
        file: { body: Readable.from(response.body), filename: 'music.mp3' },
        units: seconds,
        unitsReported: false,
      },
    };
  },
};
