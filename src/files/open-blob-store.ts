import { join } from 'node:path';
import type { Config } from '../config.ts';
import { type BlobStore, FsBlobStore } from './blob-store.ts';
import { S3BlobStore } from './s3-blob-store.ts';

/** The blob store the configuration names: the data directory's `blobs/` (one instance), or an S3 bucket (several). */
export function openBlobStore(config: Pick<Config, 'dataDir' | 'blobStore'>): BlobStore {
  if (config.blobStore.kind === 's3') return new S3BlobStore(config.blobStore);
  return new FsBlobStore(join(config.dataDir, 'blobs'));
}
