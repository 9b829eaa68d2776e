import type { Readable } from 'node:stream';

/** How much of a file is read to find a WAV header's `fmt ` and `data` chunks. */
export const HEAD_BYTES = 4096;

/**
 * The duration a RIFF/WAVE header states (the `data` chunk's bytes over the `fmt ` chunk's byte rate), or undefined
 * for anything that is not a WAV file with both chunks in its first bytes. A `data` size larger than the file (a
 * header written before the recording ended) counts what the file holds.
 */
export function wavSeconds(head: Buffer, totalBytes: number): number | undefined {
  if (
    head.length < 12 ||
    head.toString('ascii', 0, 4) !== 'RIFF' ||
    head.toString('ascii', 8, 12) !== 'WAVE'
  ) {
    return undefined;
  }
  let byteRate: number | undefined;
  let offset = 12;
  while (offset + 8 <= head.length) {
    const id = head.toString('ascii', offset, offset + 4);
    const size = head.readUInt32LE(offset + 4);
    if (id === 'fmt ' && offset + 20 <= head.length) byteRate = head.readUInt32LE(offset + 16);
    if (id === 'data') {
      if (!byteRate) return undefined;
      return Math.min(size, totalBytes - offset - 8) / byteRate;
    }
    offset += 8 + size + (size % 2);
  }
  return undefined;
}

/** The first bytes of a stream (up to `HEAD_BYTES`); the rest is not read. */
export async function readHead(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of stream) {
      chunks.push(chunk as Buffer);
      length += (chunk as Buffer).length;
      if (length >= HEAD_BYTES) break;
    }
  } finally {
    stream.destroy();
  }
  return Buffer.concat(chunks).subarray(0, HEAD_BYTES);
}
