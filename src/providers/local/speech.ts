import type { SpeechAdapter } from '../../contracts/audio.ts';
import { melodyFrames, melodyPcm, noteMsFor, SAMPLE_RATE } from './tones.ts';
import { wavHeader } from './wav.ts';

/**
 * The built-in `local/speech`: the input as a tune of notes that local/transcribe reads back (tones.ts), as a WAV
 * file or OpenAI's raw `pcm` (16-bit, 24 kHz, mono). It has no encoder for mp3, opus, aac or flac, so it answers
 * WAV when the request names no format (OpenAI's default is mp3) and refuses those formats by name. `speed` shortens
 * or lengthens the notes; every voice sounds the same.
 */
export const localSpeech: SpeechAdapter = {
  formats: ['wav', 'pcm'],
  defaultFormat: 'wav',
  speed: { min: 0.25, max: 4 },
  instructions: false,
  async speak({ input, format, speed }) {
    const noteMs = noteMsFor(speed);
    const header = format === 'wav' ? [wavHeader(melodyFrames(input, noteMs) * 2, SAMPLE_RATE)] : [];
    return (async function* () {
      yield* header;
      yield* melodyPcm(input, noteMs);
    })();
  },
};
