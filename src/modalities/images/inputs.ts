import { randomUUID } from 'node:crypto';
import { RequestRefused } from '../../contracts/errors.ts';
import type { BlobStore } from '../../files/blob-store.ts';
import type { Upload } from '../../files/upload.ts';
import { fetchRemoteInput, tooLarge } from '../../net/remote-input.ts';
import { allowPrivateUrls } from '../../net/url-guard.ts';

/** The spec's limit on image-edit uploads, per file. */
export const MAX_IMAGE_UPLOAD_BYTES = 25 * 1024 * 1024;

const DATA_URL = /^data:([\w.+-]+\/[\w.+-]+)?(?:;[\w=.+-]+)*;base64,/i;
const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

const EXTENSIONS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' };

export const uploadKey = (field: string, filename: string) =>
  `uploads/images/${randomUUID()}/${field}-${filename}`;

/**
 * An edit input given in a JSON body (`image`, `mask`): an http(s) URL, fetched through the URL guard, or base64
 * (bare or as a data URL). Either way the bytes are written to the blob store, within the upload limit.
 */
export async function jsonImageInput(
  value: string,
  field: string,
  deps: { blobs: BlobStore; env: NodeJS.ProcessEnv },
  signal: AbortSignal,
): Promise<Upload> {
  const limit = { maxBytes: MAX_IMAGE_UPLOAD_BYTES, tooLarge: () => tooLarge(field, MAX_IMAGE_UPLOAD_BYTES) };
  if (/^https?:\/\//i.test(value)) {
    const remote = await fetchRemoteInput(value, field, {
      allowPrivate: allowPrivateUrls(deps.env),
      maxBytes: MAX_IMAGE_UPLOAD_BYTES,
      signal,
    });
    const mimetype = remote.contentType?.split(';')[0]?.trim() || 'image/png';
    const key = uploadKey(field, `${field}.${EXTENSIONS[mimetype] ?? 'png'}`);
    const stored = await deps.blobs.write(key, remote.body, limit);
    return {
      key,
      filename: key.split('/').pop() as string,
      mimetype,
      bytes: stored.bytes,
      sha256: stored.sha256,
    };
  }
  const dataUrl = DATA_URL.exec(value);
  const encoded = dataUrl ? value.slice(dataUrl[0].length) : value;
  if (encoded.length === 0 || !BASE64.test(encoded)) {
    throw new RequestRefused(
      'invalid',
      `'${field}': neither an http(s) URL nor base64 image data (bare or as a data: URL)`,
    );
  }
  // Base64 carries 3 bytes per 4 characters: refuse before decoding what cannot fit.
  if (Math.floor((encoded.replace(/\s/g, '').length * 3) / 4) > MAX_IMAGE_UPLOAD_BYTES + 2) {
    throw tooLarge(field, MAX_IMAGE_UPLOAD_BYTES);
  }
  const mimetype = dataUrl?.[1]?.toLowerCase() ?? 'image/png';
  const key = uploadKey(field, `${field}.${EXTENSIONS[mimetype] ?? 'png'}`);
  const stored = await deps.blobs.write(key, Buffer.from(encoded, 'base64'), limit);
  return {
    key,
    filename: key.split('/').pop() as string,
    mimetype,
    bytes: stored.bytes,
    sha256: stored.sha256,
  };
}
