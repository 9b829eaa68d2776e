import type { FastifyRequest } from 'fastify';
import type { BlobStore } from './blob-store.ts';

/** A file part of a multipart body, as stored in the blob store. */
export interface Upload {
  /** Where the bytes were stored. */
  key: string;
  filename: string;
  mimetype: string;
  bytes: number;
  /** SHA-256 of the bytes, hex. */
  sha256: string;
}

export interface MultipartOptions {
  /** The file fields accepted, each with its size limit in bytes. */
  files: Record<string, number>;
  /** Where a file field's bytes go; by default a fresh key under `uploads/`. */
  keyOf?: (field: string, filename: string) => string;
  /** Most text fields accepted. */
  maxFields?: number;
}

export interface Multipart {
  fields: Record<string, string>;
  files: Record<string, Upload>;
  /** Removes every stored upload (call when the bytes were only needed for the request). */
  discard(): Promise<void>;
}

/**
 * Reads a request's multipart body into the blob store: src/http/uploads.ts's `receiveMultipart`, handed in by
 * the route so that the services taking uploads do not depend on the HTTP layer.
 */
export type ReadMultipart = (
  request: FastifyRequest,
  blobs: BlobStore,
  options: MultipartOptions,
) => Promise<Multipart>;

/** Room for the text fields and part headers beside the files, in a multipart body's declared length. */
export const MULTIPART_OVERHEAD_BYTES = 2 * 1024 * 1024;

/** A filename safe as the last part of a blob key: the client's name, reduced to plain characters. */
export function safeFilename(name: string | undefined, fallback = 'file'): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  const clean = base
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._-]+/, '')
    .slice(0, 120);
  return clean || fallback;
}
