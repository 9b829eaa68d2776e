import type { SpeechAdapter, SpeechFormat } from '../../contracts/audio.ts';
import { postBody } from '../post-body.ts';
import { elevenLabsEndpoint, elevenLabsError } from './api.ts';

/**
 * ElevenLabs' `output_format` (codec_samplerate_bitrate) for each format the gateway offers. PCM is 24 kHz 16-bit
 * mono, as OpenAI's `pcm` is. ElevenLabs has no AAC, FLAC or WAV-at-every-tier output.
 */
const OUTPUT_FORMATS: Partial<Record<SpeechFormat, string>> = {
  mp3: 'mp3_44100_128',
  opus: 'opus_48000_128',
  pcm: 'pcm_24000',
};

/** "George", a premade voice every account has (the one ElevenLabs' own examples use). */
export const ELEVENLABS_DEFAULT_VOICE = 'JBFqnCBsd6RMkjVDRZzb';

/**
 * `POST /v1/text-to-speech/{voice_id}/stream`: `voice` is an ElevenLabs voice id, `speed` goes in
 * `voice_settings` (ElevenLabs takes 0.7 to 1.2). The audio body is handed on unread.
 */
export const elevenLabsSpeech: SpeechAdapter = {
  formats: ['mp3', 'opus', 'pcm'],
  speed: { min: 0.7, max: 1.2 },
  instructions: false,
  async speak({ input, voice, format, speed, upstream, signal }) {
    const outputFormat = OUTPUT_FORMATS[format] ?? 'mp3_44100_128';
    const voiceId = encodeURIComponent(voice ?? ELEVENLABS_DEFAULT_VOICE);
    const endpoint = elevenLabsEndpoint(
      upstream,
      `/v1/text-to-speech/${voiceId}/stream?output_format=${outputFormat}`,
    );
    const response = await postBody({
      url: endpoint.url,
      headers: endpoint.headers,
      body: {
        json: {
          text: input,
          model_id: upstream.model,
          ...(speed === undefined ? {} : { voice_settings: { speed } }),
        },
      },
      timeoutMs: upstream.timeoutMs,
      signal,
      errorMessage: elevenLabsError,
    });
    return response.body;
  },
};
