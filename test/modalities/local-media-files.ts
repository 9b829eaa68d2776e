import * as zlib from 'node:zlib';
import { expect } from 'vitest';

// Media files for the local test models' spec: a PNG reader that checks what a decoder would, and audio made here.

/** A PNG's chunks, each CRC checked (with node:zlib's CRC-32, where this Node has it), its pixels inflated from IDAT. */
export function readPng(png: Buffer) {
  expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  const chunks: { type: string; data: Buffer }[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    const type = png.toString('ascii', at + 4, at + 8);
    const data = png.subarray(at + 8, at + 8 + length);
    if (typeof zlib.crc32 === 'function') {
      expect(zlib.crc32(png.subarray(at + 4, at + 8 + length)), `${type} CRC`).toBe(
        png.readUInt32BE(at + 8 + length),
      );
    }
    chunks.push({ type, data });
    at += 12 + length;
  }
  expect(chunks[0]?.type).toBe('IHDR');
  expect(chunks.at(-1)?.type).toBe('IEND');
  const header = chunks[0]?.data as Buffer;
  const width = header.readUInt32BE(0);
  const height = header.readUInt32BE(4);
  const raw = zlib.inflateSync(Buffer.concat(chunks.filter((c) => c.type === 'IDAT').map((c) => c.data)));
  expect(raw.length).toBe(height * (1 + width * 3));
  const text = Object.fromEntries(
    chunks
      .filter((c) => c.type === 'iTXt')
      .map((c) => {
        const keyword = c.data.toString('latin1', 0, c.data.indexOf(0));
        return [keyword, c.data.subarray(keyword.length + 5).toString('utf8')];
      }),
  );
  const pixel = (x: number, y: number) => [...raw.subarray(y * (1 + width * 3) + 1 + x * 3).subarray(0, 3)];
  return { width, height, colourType: header[9], text, pixel };
}

/** A PNG made here, not by the gateway: the smallest valid one (1×1, grey). */
export function readyPng(): Buffer {
  return Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNoAAAAggCBd81ytgAAAABJRU5ErkJggg==',
    'base64',
  );
}

/** A WAV file made here: a 440 Hz tone of the given length, 16 kHz 16-bit mono. */
export function foreignWav(seconds: number): Buffer {
  const frames = Math.round(seconds * 16_000);
  const file = Buffer.alloc(44 + frames * 2);
  file.write('RIFF', 0, 'ascii');
  file.writeUInt32LE(36 + frames * 2, 4);
  file.write('WAVEfmt ', 8, 'ascii');
  file.writeUInt32LE(16, 16);
  file.writeUInt16LE(1, 20);
  file.writeUInt16LE(1, 22);
  file.writeUInt32LE(16_000, 24);
  file.writeUInt32LE(32_000, 28);
  file.writeUInt16LE(2, 32);
  file.writeUInt16LE(16, 34);
  file.write('data', 36, 'ascii');
  file.writeUInt32LE(frames * 2, 40);
  for (let i = 0; i < frames; i++)
    file.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 440 * i) / 16_000) * 8000), 44 + i * 2);
  return file;
}

/** A 16-bit mono WAV resampled (linear interpolation) to 32-bit float stereo at another rate. */
export function resampledFloatWav(wav: Buffer, rate: number): Buffer {
  const from = wav.readUInt32LE(24);
  const input = (wav.length - 44) / 2;
  const frames = Math.floor((input * rate) / from);
  const file = Buffer.alloc(44 + frames * 8);
  file.write('RIFF', 0, 'ascii');
  file.writeUInt32LE(36 + frames * 8, 4);
  file.write('WAVEfmt ', 8, 'ascii');
  file.writeUInt32LE(16, 16);
  file.writeUInt16LE(3, 20);
  file.writeUInt16LE(2, 22);
  file.writeUInt32LE(rate, 24);
  file.writeUInt32LE(rate * 8, 28);
  file.writeUInt16LE(8, 32);
  file.writeUInt16LE(32, 34);
  file.write('data', 36, 'ascii');
  file.writeUInt32LE(frames * 8, 40);
  const sample = (i: number) => (i < input ? wav.readInt16LE(44 + i * 2) / 32768 : 0);
  for (let i = 0; i < frames; i++) {
    const at = (i * from) / rate;
    const low = Math.floor(at);
    const value = sample(low) + (sample(low + 1) - sample(low)) * (at - low);
    file.writeFloatLE(value, 44 + i * 8);
    file.writeFloatLE(-value, 48 + i * 8);
  }
  return file;
}
