/**
 * The RIFF/WAVE container as local/speech writes it (16-bit PCM, mono) and local/transcribe reads it (16-bit PCM or
 * 32-bit float, any rate and channel count; the first channel is listened to).
 */

export const HEADER_BYTES = 44;

export function wavHeader(dataBytes: number, sampleRate: number): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

export interface PcmAudio {
  sampleRate: number;
  /** Frames (one sample per channel) the audio holds. */
  frames: number;
  /** The first channel's samples from..to (frame indices), scaled to -1..1; undefined for an unread encoding. */
  window?: (from: number, to: number) => Float32Array;
}

const PCM = 1;
const FLOAT = 3;
const EXTENSIBLE = 0xfffe;

/**
 * The audio of a WAV file: its length from the `fmt ` and `data` chunks whatever the encoding, its samples when they
 * are 16-bit PCM or 32-bit float. Undefined for anything that is not a WAV file. A `data` chunk longer than the
 * file (written before the recording ended) counts what the file holds.
 */
export function readWav(file: Buffer): PcmAudio | undefined {
  if (
    file.length < 12 ||
    file.toString('ascii', 0, 4) !== 'RIFF' ||
    file.toString('ascii', 8, 12) !== 'WAVE'
  ) {
    return undefined;
  }
  let format:
    | { tag: number; channels: number; sampleRate: number; blockAlign: number; bits: number }
    | undefined;
  let offset = 12;
  while (offset + 8 <= file.length) {
    const id = file.toString('ascii', offset, offset + 4);
    const size = file.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ' && body + 16 <= file.length) {
      let tag = file.readUInt16LE(body);
      // WAVE_FORMAT_EXTENSIBLE names the real encoding in the first two bytes of its sub-format GUID.
      if (tag === EXTENSIBLE && size >= 26 && body + 26 <= file.length) tag = file.readUInt16LE(body + 24);
      format = {
        tag,
        channels: file.readUInt16LE(body + 2),
        sampleRate: file.readUInt32LE(body + 4),
        blockAlign: file.readUInt16LE(body + 12),
        bits: file.readUInt16LE(body + 14),
      };
    }
    if (id === 'data') {
      if (!format || format.blockAlign === 0 || format.sampleRate === 0) return undefined;
      const bytes = Math.min(size, file.length - body);
      const { tag, bits, blockAlign, sampleRate } = format;
      const frames = Math.floor(bytes / blockAlign);
      const sampleAt =
        tag === PCM && bits === 16
          ? (at: number) => file.readInt16LE(at) / 32768
          : tag === FLOAT && bits === 32
            ? (at: number) => file.readFloatLE(at)
            : undefined;
      const window =
        sampleAt &&
        ((from: number, to: number) => samples(from, to, frames, (i) => sampleAt(body + i * blockAlign)));
      return { sampleRate, frames, window };
    }
    offset = body + size + (size % 2);
  }
  return undefined;
}

/** Raw 16-bit little-endian mono PCM (OpenAI's `pcm` speech format), at the rate given. */
export function readPcm(file: Buffer, sampleRate: number): PcmAudio {
  const frames = Math.floor(file.length / 2);
  return {
    sampleRate,
    frames,
    window: (from, to) => samples(from, to, frames, (i) => file.readInt16LE(i * 2) / 32768),
  };
}

function samples(from: number, to: number, frames: number, at: (frame: number) => number): Float32Array {
  const end = Math.min(to, frames);
  const out = new Float32Array(Math.max(0, end - from));
  for (let i = 0; i < out.length; i++) out[i] = at(from + i);
  return out;
}
