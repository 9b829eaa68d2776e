import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import type * as S3 from '@aws-sdk/client-s3';
import type { S3Settings } from '../config.ts';
import { type BlobStore, type BlobWriteOptions, type StoredBlob, spoolTo } from './blob-store.ts';

// The AWS SDK is a few MB of heap and ~40 ms of loading: required when an S3 store is opened, so that a
// gateway storing blobs on its disk never loads it.
const require = createRequire(import.meta.url);

const KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

const notFound = (error: unknown) => {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
};

/**
 * Blobs in an S3-compatible bucket, shared by every gateway instance (docs/operations.md): the store for more than
 * one instance, where each one's data directory is its own. Writes are spooled to a temporary file first, so that
 * the size and hash are known and a write past its limit sends nothing; the object appears whole or not at all.
 */
export class S3BlobStore implements BlobStore {
  private readonly sdk = require('@aws-sdk/client-s3') as typeof S3;
  private readonly client: S3.S3Client;

  constructor(private readonly settings: S3Settings) {
    this.client = new this.sdk.S3Client({
      region: settings.region,
      endpoint: settings.endpoint,
      forcePathStyle: settings.forcePathStyle,
      credentials:
        settings.accessKeyId && settings.secretAccessKey
          ? { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey }
          : undefined,
      // Checksums only where S3 requires them: S3-compatible stores differ in the trailing checksums they take.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  private key(key: string): string {
    if (!KEY.test(key) || key.split('/').some((part) => part === '..' || part === '.')) {
      throw new Error(`invalid blob key ${JSON.stringify(key)}`);
    }
    return `${this.settings.prefix}${key}`;
  }

  async write(
    key: string,
    body: Readable | AsyncIterable<Uint8Array> | Uint8Array,
    options: BlobWriteOptions = {},
  ): Promise<StoredBlob> {
    const objectKey = this.key(key);
    const dir = await mkdtemp(join(tmpdir(), 'gw-s3-'));
    const spool = join(dir, randomUUID());
    try {
      const stored = await spoolTo(spool, body, options);
      await this.client.send(
        new this.sdk.PutObjectCommand({
          Bucket: this.settings.bucket,
          Key: objectKey,
          Body: createReadStream(spool),
          ContentLength: stored.bytes,
        }),
      );
      return stored;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** A stream at once; the object is fetched as it is read. A missing one fails the stream with ENOENT, as a file would. */
  read(key: string): Readable {
    const objectKey = this.key(key);
    const out = new PassThrough();
    this.client.send(new this.sdk.GetObjectCommand({ Bucket: this.settings.bucket, Key: objectKey })).then(
      (response) => {
        const body = response.Body as Readable;
        body.on('error', (error) => out.destroy(error));
        body.pipe(out);
      },
      (error: unknown) => {
        if (notFound(error)) {
          out.destroy(Object.assign(new Error(`ENOENT: no blob ${key}`), { code: 'ENOENT' }));
          return;
        }
        out.destroy(error as Error);
      },
    );
    return out;
  }

  /** The whole object in memory: multipart bodies sent upstream are of bounded size (an audio file, an image). */
  async blob(key: string, type?: string): Promise<Blob> {
    const response = await this.client.send(
      new this.sdk.GetObjectCommand({ Bucket: this.settings.bucket, Key: this.key(key) }),
    );
    const bytes = await (
      response.Body as { transformToByteArray(): Promise<Uint8Array> }
    ).transformToByteArray();
    return new Blob([bytes], type ? { type } : undefined);
  }

  async size(key: string): Promise<number | undefined> {
    try {
      const head = await this.client.send(
        new this.sdk.HeadObjectCommand({ Bucket: this.settings.bucket, Key: this.key(key) }),
      );
      return head.ContentLength;
    } catch (error) {
      if (notFound(error)) return undefined;
      throw error;
    }
  }

  async remove(key: string): Promise<void> {
    await this.client.send(
      new this.sdk.DeleteObjectCommand({ Bucket: this.settings.bucket, Key: this.key(key) }),
    );
  }
}
