import { promisify } from 'node:util';
import { deflate } from 'node:zlib';
import { crc32 } from './crc32.ts';

const deflated = promisify(deflate);

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const tail = Buffer.alloc(4);
  tail.writeUInt32BE(crc32(head.subarray(4), data), 0);
  return Buffer.concat([head, data, tail]);
}

/** An uncompressed international text chunk: keyword, then UTF-8 text (PNG 1.2, §4.2.3.3). */
function itxt(keyword: string, text: string): Buffer {
  return chunk(
    'iTXt',
    Buffer.concat([Buffer.from(`${keyword}\0\0\0\0\0`, 'latin1'), Buffer.from(text, 'utf8')]),
  );
}

export interface RgbImage {
  width: number;
  height: number;
  /**
   * Rows as PNG stores them before compression: each row a filter-type byte (0, none) then width × RGB bytes, so
   * the drawing code writes straight into the buffer that is deflated.
   */
  scanlines: Buffer;
}

/**
 * A truecolour 8-bit PNG (colour type 2, no interlace): signature, IHDR, the text chunks, one IDAT holding the
 * zlib stream of the scanlines, IEND. Compression runs on libuv's thread pool, off the event loop.
 */
export async function encodePng(image: RgbImage, text: Record<string, string> = {}): Promise<Buffer> {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(image.width, 0);
  header.writeUInt32BE(image.height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    SIGNATURE,
    chunk('IHDR', header),
    ...Object.entries(text).map(([keyword, value]) => itxt(keyword, value)),
    chunk('IDAT', await deflated(image.scanlines)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
