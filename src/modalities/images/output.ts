import { randomBytes } from 'node:crypto';
import { RequestRefused } from '../../contracts/errors.ts';
import type { ProducedImage } from '../../contracts/images.ts';
import type { BlobStore } from '../../files/blob-store.ts';
import type { MediaUrls } from '../../media/signed-urls.ts';
import { fetchRemoteInput, readAll } from '../../net/remote-input.ts';
import { allowPrivateUrls } from '../../net/url-guard.ts';
import { UpstreamError } from '../../providers/errors.ts';
import type { ResponseFormat } from './rules.ts';

/** Largest image the gateway takes back from a provider's own URL. */
const MAX_RESULT_BYTES = 50 * 1024 * 1024;

/** How long a result URL stays fetchable without a key: the spec's signed-URL default. */
export const RESULT_URL_SECONDS = 3600;

export interface ImageDatum {
  url?: string;
  b64_json?: string;
  revised_prompt?: string;
}

export interface OutputDeps {
  blobs: BlobStore;
  media: MediaUrls;
  env: NodeJS.ProcessEnv;
}

const EXTENSIONS: Record<string, string> = { 'image/jpeg': 'jpg', 'image/webp': 'webp', 'image/png': 'png' };

/**
 * Where a request's results live: `images/<request id>-<random>/<n>.<ext>`. The random part keeps a client that
 * reuses an X-Request-Id from overwriting (or guessing) another request's images.
 */
function resultFolder(requestId: string): string {
  const safe = requestId
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._-]+/, '')
    .slice(0, 80);
  return `images/${safe ? `${safe}-` : ''}${randomBytes(6).toString('hex')}`;
}

/** The image's bytes as a stream, and their type when known. A provider URL is downloaded through the URL guard. */
async function source(
  image: ProducedImage,
  deps: OutputDeps,
  signal: AbortSignal,
): Promise<{ body: AsyncIterable<Uint8Array> | Uint8Array; contentType: string | undefined }> {
  if ('b64' in image) return { body: Buffer.from(image.b64, 'base64'), contentType: undefined };
  if ('bytes' in image) return { body: image.bytes, contentType: image.contentType };
  try {
    const remote = await fetchRemoteInput(image.url, 'url', {
      allowPrivate: allowPrivateUrls(deps.env),
      maxBytes: MAX_RESULT_BYTES,
      signal,
    });
    return { body: remote.body, contentType: remote.contentType };
  } catch (error) {
    // The provider's URL failing is the provider's fault, not the client's.
    if (error instanceof RequestRefused) {
      throw new UpstreamError('server', `the image URL the provider answered failed: ${error.message}`);
    }
    throw error;
  }
}

/**
 * The images in the response format the client asked for: base64 inline, or stored in the blob store and handed out
 * as signed media URLs (valid RESULT_URL_SECONDS, no key needed).
 */
export async function deliverImages(
  images: ProducedImage[],
  format: ResponseFormat,
  requestId: string,
  deps: OutputDeps,
  signal: AbortSignal,
): Promise<ImageDatum[]> {
  const folder = resultFolder(requestId);
  return Promise.all(
    images.map(async (image, index) => {
      const revised = image.revisedPrompt ? { revised_prompt: image.revisedPrompt } : {};
      if (format === 'b64_json') {
        if ('b64' in image) return { b64_json: image.b64, ...revised };
        const { body } = await source(image, deps, signal);
        return {
          b64_json: (body instanceof Uint8Array ? Buffer.from(body) : await readAll(body)).toString('base64'),
          ...revised,
        };
      }
      const { body, contentType } = await source(image, deps, signal);
      const type = contentType?.split(';')[0]?.trim().toLowerCase() ?? 'image/png';
      const key = `${folder}/${index}.${EXTENSIONS[type] ?? 'png'}`;
      await deps.blobs.write(key, body, { maxBytes: MAX_RESULT_BYTES });
      return { url: deps.media.sign(key, RESULT_URL_SECONDS).url, ...revised };
    }),
  );
}
