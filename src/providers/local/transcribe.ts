import type { Readable } from 'node:stream';
import type { TranscriptionAdapter, TranscriptSegment, TranscriptWord } from '../../contracts/audio.ts';
import { type Heard, hear, SAMPLE_RATE } from './tones.ts';
import { type PcmAudio, readPcm, readWav } from './wav.ts';

async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

const ms = (seconds: number) => Math.round(seconds * 1000) / 1000;

/** The UTF-8 bytes before each UTF-16 code unit of the text (and after its last), so spans are found in one pass. */
function byteOffsets(text: string): Uint32Array {
  const offsets = new Uint32Array(text.length + 1);
  let unit = 0;
  let bytes = 0;
  for (const character of text) {
    offsets[unit] = bytes;
    if (character.length === 2) offsets[unit + 1] = bytes;
    unit += character.length;
    bytes += Buffer.byteLength(character);
  }
  offsets[unit] = bytes;
  return offsets;
}

type Span = (from: number, to: number) => { start: number; end: number };

/** Where parts of the text (code units from..to) sound, from the times of their first and last UTF-8 bytes. */
function spans(heard: Heard): Span {
  const offsets = byteOffsets(heard.text);
  return (from, to) => ({
    start: ms(heard.byteStart(offsets[from] as number)),
    end: ms(heard.byteEnd((offsets[to] as number) - 1)),
  });
}

/** One segment per sentence, in OpenAI's verbose_json shape (figures a decoder has none of are neutral). */
function segmentsOf(heard: Heard, span: Span): TranscriptSegment[] {
  return [...heard.text.matchAll(/[^.!?\n]*(?:[.!?]+|\n|$)/g)]
    .filter((match) => match[0].trim() !== '')
    .map((match, id) => ({
      id,
      seek: 0,
      ...span(match.index, match.index + match[0].length),
      text: match[0].trim(),
      tokens: [],
      temperature: 0,
      avg_logprob: 0,
      compression_ratio: 1,
      no_speech_prob: 0,
    }));
}

function wordsOf(heard: Heard, span: Span): TranscriptWord[] {
  return [...heard.text.matchAll(/\S+/g)].map((match) => ({
    word: match[0],
    ...span(match.index, match.index + match[0].length),
  }));
}

const secondsText = (seconds: number) => {
  const rounded = Math.round(seconds * 10) / 10;
  return `${rounded} second${rounded === 1 ? '' : 's'}`;
};

/**
 * The built-in `local/transcribe`: reads back the tunes local/speech makes (as WAV, or as its raw 24 kHz PCM) to
 * their text, with a segment per sentence and word timings. Any other WAV file is transcribed as `[audio of N
 * seconds]`, billed for its length; audio in another format as a note saying so, billed for the gateway's estimate
 * of its length (it cannot measure it).
 */
export const localTranscriptions: TranscriptionAdapter = {
  timestamps: () => true,
  async transcribe({ audio, language, words }) {
    const file = await bytesOf(audio.stream());
    const wav = readWav(file);
    const pcm: PcmAudio = wav ?? readPcm(file, SAMPLE_RATE);
    const window = pcm.window;
    const heard = window && (await hear({ sampleRate: pcm.sampleRate, frames: pcm.frames, window }));
    const durationSeconds = pcm.frames / pcm.sampleRate;
    if (heard) {
      const span = spans(heard);
      return {
        text: heard.text,
        language,
        durationSeconds,
        segments: segmentsOf(heard, span),
        words: words ? wordsOf(heard, span) : undefined,
      };
    }
    if (!wav) {
      return {
        text: '[audio local/transcribe cannot read: it hears WAV files and local/speech output only]',
        language,
        durationSeconds: undefined,
        segments: [],
        words: words ? [] : undefined,
      };
    }
    const text = `[audio of ${secondsText(durationSeconds)}]`;
    const segment = { id: 0, seek: 0, start: 0, end: ms(durationSeconds), text, tokens: [] };
    return {
      text,
      language,
      durationSeconds,
      segments: [{ ...segment, temperature: 0, avg_logprob: 0, compression_ratio: 1, no_speech_prob: 1 }],
      words: words ? [] : undefined,
    };
  },
};
