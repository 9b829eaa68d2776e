import { randomUUID } from 'node:crypto';
import type { FastifyMultipartBaseOptions } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { RequestRefused } from '../contracts/errors.ts';
import { isUnstorable, UNSTORABLE } from '../contracts/input-check.ts';
import type { BlobStore } from '../files/blob-store.ts';
import {
  MULTIPART_OVERHEAD_BYTES,
  type Multipart,
  type MultipartOptions,
  safeFilename,
  type Upload,
} from '../files/upload.ts';
import { tooLarge } from '../net/remote-input.ts';

export type { Multipart, MultipartOptions, Upload };

/** A route's config when it reads a multipart body: any other route refuses one with a 415 (src/http/edge.ts). */
export const TAKES_FILES = { takesFiles: true };

export function isMultipart(request: FastifyRequest): boolean {
  return request.isMultipart();
}

/**
 * Reads a multipart/form-data body, streaming each accepted file to the blob store as it arrives (nothing is held
 * whole in memory). A file past its limit is a 413 naming the field; an unknown file field, or a part without a
 * name, is a 400. On any failure the files already stored are removed.
 */
export async function receiveMultipart(
  request: FastifyRequest,
  blobs: BlobStore,
  options: MultipartOptions,
): Promise<Multipart> {
  const fields: Record<string, string> = {};
  const files: Record<string, Upload> = {};
  const discard = async () => {
    await Promise.all(Object.values(files).map((file) => blobs.remove(file.key)));
  };
  const keyOf =
    options.keyOf ?? ((_field: string, filename: string) => `uploads/${randomUUID()}/${filename}`);
  refuseDeclaredOversize(request, options.files);
  try {
    const maxFile = Math.max(0, ...Object.values(options.files));
    const parse: FastifyMultipartBaseOptions = {
      limits: { fileSize: maxFile + 1, fields: options.maxFields ?? 50, fieldSize: 1024 * 1024 },
      throwFileSizeLimit: false,
    };
    for await (const part of request.parts(parse)) {
      // busboy hands on a part whose Content-Disposition has no `name` with no field name at all.
      if (!part.fieldname) {
        if (part.type === 'file') part.file.resume();
        throw new RequestRefused(
          'invalid',
          'multipart body: a part without a name (Content-Disposition: form-data; name="...")',
        );
      }
      if (isUnstorable(part.fieldname)) {
        throw new RequestRefused('invalid', `a field name ${UNSTORABLE}`);
      }
      if (part.type === 'field') {
        const value = typeof part.value === 'string' ? part.value : String(part.value);
        if (isUnstorable(value)) {
          throw new RequestRefused('invalid', `'${part.fieldname}': ${UNSTORABLE}`);
        }
        fields[part.fieldname] = value;
        continue;
      }
      const limit = options.files[part.fieldname];
      if (limit === undefined) {
        part.file.resume();
        const accepted = Object.keys(options.files).join(', ');
        throw new RequestRefused(
          'invalid',
          `'${part.fieldname}': unexpected file field (accepted: ${accepted})`,
        );
      }
      if (files[part.fieldname]) {
        part.file.resume();
        throw new RequestRefused('invalid', `'${part.fieldname}': send one file`);
      }
      if (isUnstorable(part.filename ?? '')) {
        part.file.resume();
        throw new RequestRefused('invalid', `'${part.fieldname}': the file name ${UNSTORABLE}`);
      }
      const filename = safeFilename(part.filename);
      const key = keyOf(part.fieldname, filename);
      const stored = await blobs.write(key, part.file, {
        maxBytes: limit,
        tooLarge: () => tooLarge(part.fieldname, limit),
      });
      if (part.file.truncated) {
        await blobs.remove(key);
        throw tooLarge(part.fieldname, limit);
      }
      files[part.fieldname] = {
        key,
        filename: part.filename || filename,
        mimetype: part.mimetype,
        bytes: stored.bytes,
        sha256: stored.sha256,
      };
    }
  } catch (error) {
    await discard();
    if (error instanceof RequestRefused) throw error;
    if (isMalformedBody(error)) {
      throw new RequestRefused('invalid', `multipart body: ${(error as Error).message}`);
    }
    throw error;
  }
  return { fields, files, discard };
}

/**
 * A body whose Content-Length already exceeds every file at its limit (plus room for text fields) is refused
 * before a byte of it is read; the connection then closes (src/http/edge.ts) rather than drain it.
 */
function refuseDeclaredOversize(request: FastifyRequest, files: Record<string, number>): void {
  const declared = Number(request.headers['content-length']);
  const limits = Object.entries(files);
  const ceiling = limits.reduce((sum, [, limit]) => sum + limit, 0) + MULTIPART_OVERHEAD_BYTES;
  if (!Number.isFinite(declared) || declared <= ceiling) return;
  const [only] = limits;
  if (limits.length === 1 && only) throw tooLarge(only[0], only[1]);
  throw new RequestRefused(
    'too_large',
    `Request body is too large: ${declared} bytes declared, at most ${ceiling} accepted`,
  );
}

/**
 * The parser's refusals of a body: the plugin's own (codes `FST_...`) and busboy's, which are plain errors
 * without a code ("Unexpected end of form", "Multipart: Boundary not found"). A system error (a code such as
 * ENOSPC from the blob store) or a programming error (TypeError, ...) is the gateway's, not the client's.
 */
function isMalformedBody(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code.startsWith('FST_');
  return Object.getPrototypeOf(error) === Error.prototype;
}
