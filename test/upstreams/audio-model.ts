/**
 * The audio simulators' shared "model": tone WAV files for tests, how long a file plays (read from its WAV header,
 * as a real decoder would), a deterministic transcript of it, and deterministic speech bytes for a text.
 */

/** A mono 16-bit PCM WAV file holding a sine tone. */
export function toneWav(seconds: number, sampleRate = 16_000, hz = 440): Buffer {
  const samples = Math.round(seconds * sampleRate);
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) {
    data.writeInt16LE(Math.round(Math.sin((2 * Math.PI * hz * i) / sampleRate) * 12_000), i * 2);
  }
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28); // byte rate
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

/** Seconds of audio in a WAV file; undefined for bytes a decoder would refuse (the simulators take WAV only). */
export function playedSeconds(bytes: Buffer): number | undefined {
  if (
    bytes.length < 44 ||
    bytes.toString('ascii', 0, 4) !== 'RIFF' ||
    bytes.toString('ascii', 8, 12) !== 'WAVE'
  ) {
    return undefined;
  }
  const byteRate = bytes.readUInt32LE(28);
  const dataBytes = bytes.readUInt32LE(40);
  return byteRate > 0 ? Math.min(dataBytes, bytes.length - 44) / byteRate : undefined;
}

export interface SimSegment {
  start: number;
  end: number;
  text: string;
}

/** Two sentences, one for each half of the audio. */
export function simSegments(seconds: number): SimSegment[] {
  const half = Math.round((seconds / 2) * 100) / 100;
  return [
    { start: 0, end: half, text: 'Hello from the simulator.' },
    { start: half, end: seconds, text: `The audio lasted ${seconds.toFixed(2)} seconds.` },
  ];
}

export const simText = (seconds: number) =>
  simSegments(seconds)
    .map((s) => s.text)
    .join(' ');

/** Words with even timings across each segment. */
export function simWords(seconds: number): { word: string; start: number; end: number }[] {
  return simSegments(seconds).flatMap((segment) => {
    const words = segment.text.split(' ');
    const step = (segment.end - segment.start) / words.length;
    return words.map((word, i) => ({
      word,
      start: Math.round((segment.start + i * step) * 1000) / 1000,
      end: Math.round((segment.start + (i + 1) * step) * 1000) / 1000,
    }));
  });
}

/** "Audio" for a text: a format tag, then the text's bytes, in as many chunks as asked. */
export function speechBytes(format: string, text: string): Buffer {
  return Buffer.concat([Buffer.from(`SIMAUDIO:${format}:`), Buffer.from(text, 'utf8')]);
}

export function chunksOf(bytes: Buffer, count: number): Buffer[] {
  const size = Math.ceil(bytes.length / count);
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return chunks;
}
