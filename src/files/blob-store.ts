import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, openAsBlob } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface StoredBlob {
  bytes: number;
  sha256: string;
}

export interface BlobWriteOptions {
  /** Past this many bytes the write fails with the error `tooLarge()` returns, and nothing is kept. */
  maxBytes?: number;
  tooLarge?: () => Error;
}

/**
 * Streams `body` into the file `path` (readable by the gateway's user alone), counting and hashing it on the way;
 * past `maxBytes` the write fails with the caller's error. The caller removes the file on failure.
 */
export async function spoolTo(
  path: string,
  body: Readable | AsyncIterable<Uint8Array> | Uint8Array,
  options: BlobWriteOptions,
): Promise<StoredBlob> {
  const hash = createHash('sha256');
  let bytes = 0;
  const count = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      if (options.maxBytes !== undefined && bytes > options.maxBytes) {
        callback(options.tooLarge?.() ?? new Error(`larger than ${options.maxBytes} bytes`));
        return;
      }
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  const source = body instanceof Uint8Array ? Readable.from([body]) : Readable.from(body);
  await pipeline(source, count, createWriteStream(path, { mode: 0o600 }));
  return { bytes, sha256: hash.digest('hex') };
}

/**
 * Where file bytes live: uploads, job results, batch output, generated images. Keys are slash-separated paths
 * chosen by the gateway (never by a client). Bytes stream in and out; nothing holds a whole file in memory.
 */
export interface BlobStore {
  write(
    key: string,
    body: Readable | AsyncIterable<Uint8Array> | Uint8Array,
    options?: BlobWriteOptions,
  ): Promise<StoredBlob>;
  read(key: string): Readable;
  /** A file-backed Blob, for multipart bodies sent upstream (read lazily from disk). */
  blob(key: string, type?: string): Promise<Blob>;
  size(key: string): Promise<number | undefined>;
  remove(key: string): Promise<void>;
}

const KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

/** The default adapter: files under a directory (the data directory's `blobs/`), written to a temporary name and renamed. */
export class FsBlobStore implements BlobStore {
  readonly root: string;
  constructor(root: string) {
    this.root = resolve(root);
  }

  private path(key: string): string {
    if (!KEY.test(key) || key.split('/').some((part) => part === '..' || part === '.')) {
      throw new Error(`invalid blob key ${JSON.stringify(key)}`);
    }
    const path = join(this.root, ...key.split('/'));
    if (!path.startsWith(this.root + sep)) throw new Error(`invalid blob key ${JSON.stringify(key)}`);
    return path;
  }

  async write(
    key: string,
    body: Readable | AsyncIterable<Uint8Array> | Uint8Array,
    options: BlobWriteOptions = {},
  ): Promise<StoredBlob> {
    const path = this.path(key);
    // Clients' files are readable by the gateway's user alone.
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const temporary = `${path}.${randomUUID()}.part`;
    try {
      const stored = await spoolTo(temporary, body, options);
      await rename(temporary, path);
      return stored;
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  read(key: string): Readable {
    return createReadStream(this.path(key));
  }

  async blob(key: string, type?: string): Promise<Blob> {
    return openAsBlob(this.path(key), type ? { type } : undefined);
  }

  async size(key: string): Promise<number | undefined> {
    try {
      const info = await stat(this.path(key));
      return info.isFile() ? info.size : undefined;
    } catch {
      return undefined;
    }
  }

  async remove(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }
}
