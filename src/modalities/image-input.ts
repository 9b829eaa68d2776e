import { z } from 'zod';
import { RequestRefused } from '../contracts/errors.ts';
import { fetchRemoteInput, readAll, tooLarge } from '../net/remote-input.ts';
import { allowPrivateUrls, checkRemoteUrl, UrlRefused } from '../net/url-guard.ts';

/**
 * The image of a detection or OCR request: `image_url` (fetched through the URL guard, or checked by it when the
 * provider fetches it itself) or `image_b64` (base64, or a `data:` URL), exactly one of them.
 */
export const ImageFields = {
  image_url: z.string().min(1).optional(),
  image_b64: z.string().min(1).optional(),
};

export function exactlyOneImage(
  body: { image_url?: string; image_b64?: string },
  ctx: z.core.$RefinementCtx,
): void {
  const given = (body.image_url !== undefined ? 1 : 0) + (body.image_b64 !== undefined ? 1 : 0);
  if (given !== 1) {
    ctx.addIssue({
      code: 'custom',
      path: [body.image_url === undefined ? 'image_url' : 'image_b64'],
      message:
        given === 0
          ? "required: give 'image_url' or 'image_b64'"
          : "give 'image_url' or 'image_b64', not both",
    });
  }
}

export interface ImageBytes {
  data: Buffer;
  /** From the bytes themselves; undefined when they are none of the formats recognised. */
  mediaType: string | undefined;
}

const SIGNATURES: readonly [string, (b: Buffer) => boolean][] = [
  [
    'image/png',
    (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  ],
  ['image/jpeg', (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff],
  ['image/gif', (b) => b.subarray(0, 4).toString('latin1') === 'GIF8'],
  [
    'image/webp',
    (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
  ],
  ['image/avif', (b) => b.subarray(4, 12).toString('latin1') === 'ftypavif'],
  ['image/bmp', (b) => b.subarray(0, 2).toString('latin1') === 'BM'],
  ['image/tiff', (b) => ['II*\u0000', 'MM\u0000*'].includes(b.subarray(0, 4).toString('latin1'))],
  ['application/pdf', (b) => b.subarray(0, 5).toString('latin1') === '%PDF-'],
];

export function sniffMediaType(data: Buffer): string | undefined {
  return SIGNATURES.find(([, matches]) => matches(data))?.[0];
}

const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

/** Decodes `image_b64` (plain base64 or a `data:<type>;base64,` URL) within the size limit. */
export function decodeImageB64(raw: string, maxBytes: number, field = 'image_b64'): ImageBytes {
  const payload = raw.startsWith('data:') ? raw.slice(raw.indexOf(',') + 1) : raw;
  if (raw.startsWith('data:') && !/^data:[^,]*;base64,/.test(raw)) {
    throw new RequestRefused('invalid', `'${field}': a data: URL must be base64-encoded`);
  }
  const normalized = payload.replaceAll('-', '+').replaceAll('_', '/');
  if (!BASE64.test(normalized)) {
    throw new RequestRefused('invalid', `'${field}': not base64`);
  }
  // Checked before decoding so that an oversized image is not held in memory twice.
  if (Math.floor((normalized.replace(/\s|=/g, '').length * 3) / 4) > maxBytes)
    throw tooLarge(field, maxBytes);
  const data = Buffer.from(normalized, 'base64');
  if (data.length === 0) throw new RequestRefused('invalid', `'${field}': empty image`);
  return { data, mediaType: sniffMediaType(data) };
}

/** Fetches `image_url` through the guard (400 naming the field when refused or unreachable, 413 past the limit). */
export async function fetchImage(
  url: string,
  env: NodeJS.ProcessEnv,
  maxBytes: number,
  signal: AbortSignal,
  field = 'image_url',
): Promise<ImageBytes> {
  const input = await fetchRemoteInput(url, field, { allowPrivate: allowPrivateUrls(env), maxBytes, signal });
  const data = await readAll(input.body);
  if (data.length === 0) throw new RequestRefused('invalid', `'${field}': the URL answered no bytes`);
  const declared = input.contentType?.split(';')[0]?.trim();
  return { data, mediaType: sniffMediaType(data) ?? declared };
}

/** Checks `image_url` for a provider that fetches it itself: the same guard, as a 400 naming the field. */
export async function checkImageUrl(url: string, env: NodeJS.ProcessEnv, field = 'image_url'): Promise<URL> {
  try {
    return await checkRemoteUrl(url, allowPrivateUrls(env));
  } catch (error) {
    if (error instanceof UrlRefused) throw new RequestRefused('invalid', `'${field}': ${error.message}`);
    throw error;
  }
}
