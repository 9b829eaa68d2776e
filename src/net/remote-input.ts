import { Readable, Transform } from 'node:stream';
import { RequestRefused } from '../contracts/errors.ts';
import { guardedFetch, UrlRefused } from './url-guard.ts';

export interface RemoteInput {
  /** The bytes, streamed as they arrive; the stream errors with a `too_large` refusal past `maxBytes`. */
  body: Readable;
  contentType: string | undefined;
  /** The size the server announced, when it did. */
  declaredBytes: number | undefined;
}

export interface RemoteInputOptions {
  allowPrivate: boolean;
  maxBytes: number;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/**
 * Fetches a media input a client named by URL (`image_url`, `audio_url`) through the URL guard. Every refusal is
 * the client's mistake and says so as a 400 naming the field: a refused address, an unreachable host, a non-2xx
 * answer, or a body larger than the limit.
 */
export async function fetchRemoteInput(
  raw: string,
  field: string,
  options: RemoteInputOptions,
): Promise<RemoteInput> {
  let response: Awaited<ReturnType<typeof guardedFetch>>;
  try {
    response = await guardedFetch(raw, {
      allowPrivate: options.allowPrivate,
      signal: options.signal,
      timeoutMs: options.timeoutMs ?? 30_000,
    });
  } catch (error) {
    if (error instanceof UrlRefused) throw new RequestRefused('invalid', `'${field}': ${error.message}`);
    if (options.signal?.aborted) throw error;
    throw new RequestRefused('invalid', `'${field}': could not fetch the URL (${(error as Error).message})`);
  }
  if (response.status < 200 || response.status >= 300) {
    await response.body.dump();
    throw new RequestRefused('invalid', `'${field}': fetching the URL answered HTTP ${response.status}`);
  }
  const length = Number(response.headers['content-length']);
  const declaredBytes = Number.isFinite(length) ? length : undefined;
  if (declaredBytes !== undefined && declaredBytes > options.maxBytes) {
    await response.body.dump();
    throw tooLarge(field, options.maxBytes);
  }
  const type = response.headers['content-type'];
  return {
    body: response.body.pipe(byteLimit(options.maxBytes, field)),
    contentType: typeof type === 'string' ? type : undefined,
    declaredBytes,
  };
}

export function tooLarge(field: string, maxBytes: number): RequestRefused {
  return new RequestRefused(
    'too_large',
    `'${field}': larger than the limit of ${maxBytes} bytes (${(maxBytes / 1024 / 1024).toFixed(0)} MB)`,
  );
}

/** Passes bytes through until the limit, then fails the stream with a 413 naming the field. */
export function byteLimit(maxBytes: number, field: string): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > maxBytes) callback(tooLarge(field, maxBytes));
      else callback(null, chunk);
    },
  });
}

/** Reads a whole small stream (a remote image for a provider that takes only base64) within the limit. */
export async function readAll(stream: Readable | AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of Readable.from(stream)) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}
