import { crc32 } from './crc32.ts';

/**
 * The code local/speech speaks and local/transcribe hears: every 4 bits of the text's UTF-8 bytes are one note of
 * a 16-note pentatonic scale (C5 to C8), so speech sounds like a quick tune and a transcriber can read it back by
 * finding the loudest of 16 frequencies in each note's span (Goertzel's algorithm).
 *
 *   preamble, 30 ms notes:  5 9 12 15 (a rising motif that marks the code), the note length in ms (2 notes)
 *   body, at that length:   byte count (4 notes), the bytes (2 notes each, high half first), CRC-32 (8 notes)
 *
 * The CRC tells the code from any other audio: only what it checks is read back as text.
 */

/** Hz; C major pentatonic, C5 to C8. */
const NOTES = [
  523.25, 587.33, 659.26, 783.99, 880, 1046.5, 1174.66, 1318.51, 1567.98, 1760, 2093, 2349.32, 2637.02,
  3135.96, 3520, 4186.01,
];

export const SAMPLE_RATE = 24_000;
const PREAMBLE_MS = 30;
const MOTIF = [5, 9, 12, 15];
const PREAMBLE_NOTES = MOTIF.length + 2;
/** The note length `speed` 1 gives; others scale it, within these bounds so that notes stay apart. */
const NOTE_MS = 30;
const MIN_NOTE_MS = 12;
const MAX_NOTE_MS = 120;
const AMPLITUDE = 0.3;
const FADE_MS = 3;
/** Notes synthesised or heard between two yields to the event loop (a few milliseconds' work). */
const NOTES_PER_TURN = 64;

export const noteMsFor = (speed: number | undefined) =>
  Math.min(MAX_NOTE_MS, Math.max(MIN_NOTE_MS, Math.round(NOTE_MS / (speed ?? 1))));

const samplesOf = (ms: number, rate: number) => Math.round((rate * ms) / 1000);

const nibbles = (value: number, count: number) =>
  Array.from({ length: count }, (_, i) => (value >>> (4 * (count - 1 - i))) & 0xf);

/** The notes of a text: the preamble's and the body's. */
export function melodyOf(text: string, noteMs: number): { preamble: number[]; body: number[] } {
  const bytes = Buffer.from(text, 'utf8');
  const body = [...nibbles(bytes.length, 4)];
  for (const byte of bytes) body.push(byte >> 4, byte & 0xf);
  body.push(...nibbles(crc32(bytes), 8));
  return { preamble: [...MOTIF, ...nibbles(noteMs, 2)], body };
}

/** Samples the melody of a text takes at SAMPLE_RATE. */
export function melodyFrames(text: string, noteMs: number): number {
  const { preamble, body } = melodyOf(text, noteMs);
  return preamble.length * samplesOf(PREAMBLE_MS, SAMPLE_RATE) + body.length * samplesOf(noteMs, SAMPLE_RATE);
}

function note(out: Buffer, at: number, index: number, length: number): void {
  const step = (2 * Math.PI * (NOTES[index] as number)) / SAMPLE_RATE;
  const fade = Math.min(samplesOf(FADE_MS, SAMPLE_RATE), Math.floor(length / 4));
  for (let i = 0; i < length; i++) {
    const edge = Math.min(i, length - 1 - i);
    const envelope = edge < fade ? 0.5 - 0.5 * Math.cos((Math.PI * edge) / fade) : 1;
    out.writeInt16LE(Math.round(Math.sin(step * i) * envelope * AMPLITUDE * 32767), at + i * 2);
  }
}

/** The melody as 16-bit little-endian mono PCM at SAMPLE_RATE, a chunk at a time, yielding the loop between chunks. */
export async function* melodyPcm(text: string, noteMs: number): AsyncGenerator<Buffer> {
  const { preamble, body } = melodyOf(text, noteMs);
  const notes = [
    ...preamble.map((index) => [index, samplesOf(PREAMBLE_MS, SAMPLE_RATE)] as const),
    ...body.map((index) => [index, samplesOf(noteMs, SAMPLE_RATE)] as const),
  ];
  for (let from = 0; from < notes.length; from += NOTES_PER_TURN) {
    const part = notes.slice(from, from + NOTES_PER_TURN);
    const out = Buffer.alloc(part.reduce((sum, [, length]) => sum + length * 2, 0));
    let at = 0;
    for (const [index, length] of part) {
      note(out, at, index, length);
      at += length * 2;
    }
    yield out;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export interface Heard {
  text: string;
  /** When each byte of the text's UTF-8 starts and ends, in seconds. */
  byteStart(index: number): number;
  byteEnd(index: number): number;
}

export interface Listening {
  sampleRate: number;
  frames: number;
  window(from: number, to: number): Float32Array;
}

/** The index of the loudest note in the samples (Goertzel's power at each of the 16 frequencies). */
function loudest(samples: Float32Array, coefficients: Float64Array): number {
  let best = -1;
  let bestPower = -1;
  for (let k = 0; k < coefficients.length; k++) {
    const coefficient = coefficients[k] as number;
    let s1 = 0;
    let s2 = 0;
    for (let i = 0; i < samples.length; i++) {
      const s = (samples[i] as number) + coefficient * s1 - s2;
      s2 = s1;
      s1 = s;
    }
    const power = s1 * s1 + s2 * s2 - coefficient * s1 * s2;
    if (power > bestPower) {
      bestPower = power;
      best = k;
    }
  }
  return best;
}

/**
 * The text a melody of this code carries, or undefined when the audio is not one (no motif, an impossible length,
 * a CRC that does not match). Notes are found by their times, not by counting samples, so audio resampled to
 * another rate (above 8.4 kHz, twice the highest note) still reads.
 */
export async function hear(audio: Listening): Promise<Heard | undefined> {
  const rate = audio.sampleRate;
  if (rate < 2 * (NOTES.at(-1) as number)) return undefined;
  const coefficients = Float64Array.from(NOTES, (hz) => 2 * Math.cos((2 * Math.PI * hz) / rate));
  /** The loudest note between two instants (ms from the start). */
  const read = (fromMs: number, toMs: number) =>
    loudest(audio.window(samplesOf(fromMs, rate), samplesOf(toMs, rate)), coefficients);
  const lastMs = (audio.frames / rate) * 1000;
  const preamble: number[] = [];
  for (let i = 0; i < PREAMBLE_NOTES; i++) {
    if (samplesOf((i + 1) * PREAMBLE_MS, rate) > audio.frames) return undefined;
    preamble.push(read(i * PREAMBLE_MS, (i + 1) * PREAMBLE_MS));
    if (i < MOTIF.length && preamble[i] !== MOTIF[i]) return undefined;
  }
  const noteMs = ((preamble[4] as number) << 4) | (preamble[5] as number);
  if (noteMs < MIN_NOTE_MS || noteMs > MAX_NOTE_MS) return undefined;
  const startMs = PREAMBLE_NOTES * PREAMBLE_MS;
  const noteAt = (index: number) => startMs + index * noteMs;
  // Resampling may round the last note's end off by a sample: a note counts when most of it is there.
  const available = Math.floor((lastMs - startMs) / noteMs + 0.5);
  const value = (from: number, count: number) => {
    let result = 0;
    for (let i = from; i < from + count; i++) result = (result << 4) | read(noteAt(i), noteAt(i + 1));
    return result >>> 0;
  };
  if (available < 12) return undefined;
  const byteCount = value(0, 4);
  if (4 + byteCount * 2 + 8 > available) return undefined;
  const bytes = Buffer.alloc(byteCount);
  for (let i = 0; i < byteCount; i++) {
    bytes[i] = value(4 + i * 2, 2);
    if ((i * 2) % NOTES_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  if (value(4 + byteCount * 2, 8) !== crc32(bytes)) return undefined;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
  return {
    text,
    byteStart: (index) => noteAt(4 + index * 2) / 1000,
    byteEnd: (index) => noteAt(6 + index * 2) / 1000,
  };
}
