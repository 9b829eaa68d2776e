import { createHash } from 'node:crypto';
import type { ImageGenerationCall, ImagesAdapter, ProducedImages } from '../../contracts/images.ts';
import { encodePng, type RgbImage } from './png.ts';

/** Used when the call names no size; the endpoint's rules for local/image send one always. */
const FALLBACK_SIZE = '256x256';

/** Rows drawn between two yields to the event loop (a 1024 px image is about 3 MB of pixels). */
const ROWS_PER_TURN = 64;

type Rgb = readonly [number, number, number];

const colour = (seed: Buffer, at: number): Rgb => [seed[at] ?? 0, seed[at + 1] ?? 0, seed[at + 2] ?? 0];

/**
 * A picture decided by 32 bytes: a diagonal gradient between two colours, overlaid with one of four patterns
 * (stripes at an angle, a checkerboard, rings, dots) in a third colour, at a scale from the seed. The same seed
 * draws the same pixels (V8's Math functions are the same on every platform).
 */
async function draw(width: number, height: number, seed: Buffer): Promise<RgbImage> {
  const from = colour(seed, 0);
  const to = colour(seed, 3);
  const ink = colour(seed, 7);
  const kind = (seed[6] ?? 0) % 4;
  const cells = 3 + ((seed[10] ?? 0) % 10);
  const angle = ((seed[11] ?? 0) / 256) * Math.PI;
  const [dx, dy] = [Math.cos(angle), Math.sin(angle)];
  const [cx, cy] = [(seed[12] ?? 128) / 255, (seed[13] ?? 128) / 255];
  const stride = 1 + width * 3;
  const scanlines = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    if (y > 0 && y % ROWS_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
    const v = y / height;
    let at = y * stride + 1;
    for (let x = 0; x < width; x++) {
      const u = x / width;
      const t = (u + v) / 2;
      let inked: boolean;
      switch (kind) {
        case 0:
          inked = Math.floor((u * dx + v * dy) * cells * 2) % 2 === 0;
          break;
        case 1:
          inked = (Math.floor(u * cells) + Math.floor(v * cells)) % 2 === 0;
          break;
        case 2:
          inked = Math.floor(Math.hypot(u - cx, v - cy) * cells * 2) % 2 === 0;
          break;
        default: {
          const fu = u * cells - Math.floor(u * cells) - 0.5;
          const fv = v * cells - Math.floor(v * cells) - 0.5;
          inked = fu * fu + fv * fv < 0.09;
        }
      }
      for (let c = 0; c < 3; c++) {
        const base = (from[c] as number) * (1 - t) + (to[c] as number) * t;
        scanlines[at++] = Math.round(inked ? base * 0.35 + (ink[c] as number) * 0.65 : base);
      }
    }
  }
  return { width, height, scanlines };
}

function dimensions(size: string | undefined): [number, number] {
  const [width, height] = (size ?? FALLBACK_SIZE).split('x').map(Number);
  return [width ?? 256, height ?? 256];
}

/** Each of the n images has a seed of its own: the prompt (and any source image's digest) with its index. */
async function produce(call: ImageGenerationCall, sourceDigest: string | undefined): Promise<ProducedImages> {
  const [width, height] = dimensions(call.size);
  const images = [];
  for (let index = 0; index < call.n; index++) {
    const seed = createHash('sha256')
      .update(`${call.prompt}\0${sourceDigest ?? ''}\0${index}`)
      .digest();
    const png = await encodePng(await draw(width, height, seed), {
      Description: call.prompt,
      Software: 'model-gateway local/image (a test model)',
    });
    images.push({ bytes: png, contentType: 'image/png' });
  }
  return { images, size: `${width}x${height}`, quality: 'standard' };
}

/**
 * The built-in `local/image`: real PNGs drawn from a hash of the prompt, with no key and no network, so that the
 * images endpoints (and a client's code around them) can be tried for what they cost. An edit draws from the
 * prompt and the source image's bytes together; it does not look at the picture.
 */
export const localImages: ImagesAdapter = {
  generate: (call) => produce(call, undefined),
  async edit(call) {
    const digest = createHash('sha256');
    for await (const part of call.image.blob.stream()) digest.update(part);
    return produce(call, digest.digest('hex'));
  },
};
