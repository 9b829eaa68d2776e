import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { FileOwner } from '../../commands/file/decide.ts';
import { FileCommands } from '../../commands/file/handler.ts';
import { FilePurpose, type FileUploaded } from '../../events/file.ts';
import type { EventStore } from '../../events/store.ts';
import { type FileRow, fileRow, listFiles, storedBytes } from '../../projections/files/index.ts';
import type { Sql } from '../../projections/types.ts';
import type { KeyHolder } from '../accounts/live-state.ts';
import { RequestRefused } from '../contracts/errors.ts';
import { contentTypeOf } from '../media/signed-urls.ts';
import { projectedUpTo } from '../projections/wait.ts';
import type { BlobStore } from './blob-store.ts';
import { MULTIPART_OVERHEAD_BYTES, type Multipart, type ReadMultipart } from './upload.ts';

/** OpenAI's limit for one uploaded file. */
export const DEFAULT_MAX_FILE_BYTES = 512 * 1024 * 1024;

/** The File resource as OpenAI's Files API returns it. */
export interface FileObject {
  id: string;
  object: 'file';
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  status: 'processed';
  expires_at: null;
  status_details: null;
}

/** The upload limit: GATEWAY_MAX_FILE_BYTES, else OpenAI's 512 MB. */
export function maxFileBytes(env: NodeJS.ProcessEnv): number {
  const given = Number(env.GATEWAY_MAX_FILE_BYTES);
  return Number.isSafeInteger(given) && given > 0 ? given : DEFAULT_MAX_FILE_BYTES;
}

export const newFileId = () => `file-${randomBytes(12).toString('hex')}`;
export const fileBlobKey = (fileId: string) => `files/${fileId}`;
export const ownerOf = (auth: KeyHolder): FileOwner => ({
  accountId: auth.accountId,
  subAccountId: auth.subAccountId,
});

const notFound = (id: string) => new RequestRefused('not_found', `No file with id '${id}'`);

/**
 * Files: bytes in the blob store, metadata event-sourced on `file-{id}` and served from the `files` read model.
 * A key sees the files of its own scope only: a sub-account's key its sub-account's, a main key the account's
 * own (not its sub-accounts'). Anything else is a 404.
 */
export class FilesService {
  private readonly commands: FileCommands;

  constructor(
    private readonly store: EventStore,
    private readonly sql: Sql,
    private readonly blobs: BlobStore,
    private readonly maxBytes: number,
    private readonly clock: () => Date = () => new Date(),
    /** Bytes an account may keep (GATEWAY_STORAGE_QUOTA_BYTES); uploads past it are refused. */
    private readonly quotaBytes = Number.POSITIVE_INFINITY,
  ) {
    this.commands = new FileCommands(store);
  }

  async upload(request: FastifyRequest, receiveMultipart: ReadMultipart): Promise<FileObject> {
    const fileId = newFileId();
    // Checked against the read model, so uploads racing each other may together pass the quota by their own size.
    const stored = await storedBytes(this.sql, request.auth.accountId);
    const room = this.quotaBytes - stored;
    const declared = Number(request.headers['content-length']);
    // A body past the file limit itself is refused as too large (by receiveMultipart), not as over quota.
    const fitsLimit = !(declared > this.maxBytes + MULTIPART_OVERHEAD_BYTES);
    if (room <= 0 || (fitsLimit && declared > room + MULTIPART_OVERHEAD_BYTES)) throw this.overQuota(stored);
    let received: Multipart;
    try {
      received = await receiveMultipart(request, this.blobs, {
        files: { file: Math.min(this.maxBytes, room) },
        keyOf: () => fileBlobKey(fileId),
      });
    } catch (error) {
      if (error instanceof RequestRefused && error.kind === 'too_large' && room < this.maxBytes)
        throw this.overQuota(stored);
      throw error;
    }
    const upload = received.files.file;
    const purpose = FilePurpose.safeParse(received.fields.purpose);
    if (!upload || !purpose.success) {
      await received.discard();
      if (!upload) throw new RequestRefused('invalid', "'file': a file part is required");
      throw new RequestRefused('invalid', `'purpose': one of ${FilePurpose.options.join(', ')} is required`);
    }
    // The bytes are stored in full by now; only then is the file recorded.
    return this.record(
      {
        fileId,
        accountId: request.auth.accountId,
        subAccountId: request.auth.subAccountId,
        filename: upload.filename,
        bytes: upload.bytes,
        purpose: purpose.data,
        sha256: upload.sha256,
        blobKey: upload.key,
        contentType: contentTypeOf(upload.filename),
        batchId: null,
      },
      request.id,
    );
  }

  private overQuota(stored: number): RequestRefused {
    const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
    return new RequestRefused(
      'too_large',
      `Storage quota exceeded: the account keeps ${stored} bytes (${gib(stored)}) of files and may keep ` +
        `${this.quotaBytes} (${gib(this.quotaBytes)}); delete files to upload more`,
    );
  }

  /** Records stored bytes as a file (an upload, or a batch's output), and waits until listings show it. */
  async record(file: FileUploadedData, correlationId?: string): Promise<FileObject> {
    const now = this.clock();
    const decision = await this.commands.handle(
      file.fileId,
      { type: 'RecordUpload', file },
      { now, correlationId },
    );
    if (decision.checkpoint) await projectedUpTo(this.sql, this.store, 'files', decision.checkpoint);
    return toFileObject({ ...file, createdAt: now });
  }

  async list(
    auth: KeyHolder,
    query: { purpose?: string; limit: number; after?: string; order: 'asc' | 'desc' },
  ): Promise<{
    object: 'list';
    data: FileObject[];
    first_id: string | null;
    last_id: string | null;
    has_more: boolean;
  }> {
    const rows = await listFiles(this.sql, ownerOf(auth), { ...query, limit: query.limit + 1 });
    const page = rows.slice(0, query.limit).map(fromRow);
    return {
      object: 'list',
      data: page,
      first_id: page[0]?.id ?? null,
      last_id: page[page.length - 1]?.id ?? null,
      has_more: rows.length > query.limit,
    };
  }

  /** The caller's live file, or a 404 whatever the reason (absent, deleted, someone else's). */
  async owned(auth: KeyHolder, fileId: string): Promise<FileRow> {
    const row = await fileRow(this.sql, fileId);
    if (!row || row.account_id !== auth.accountId || row.sub_account_id !== auth.subAccountId) {
      throw notFound(fileId);
    }
    return row;
  }

  async get(auth: KeyHolder, fileId: string): Promise<FileObject> {
    return fromRow(await this.owned(auth, fileId));
  }

  async content(
    auth: KeyHolder,
    fileId: string,
  ): Promise<{ body: Readable; contentType: string; bytes: number }> {
    const row = await this.owned(auth, fileId);
    return { body: this.blobs.read(row.blob_key), contentType: row.content_type, bytes: Number(row.bytes) };
  }

  /** The event first, so the file is gone from the API before its bytes are; then the bytes. */
  async delete(auth: KeyHolder, fileId: string, correlationId: string) {
    const row = await this.owned(auth, fileId);
    const decision = await this.commands.handle(
      fileId,
      { type: 'DeleteFile', owner: ownerOf(auth) },
      { now: this.clock(), correlationId },
    );
    if (decision.checkpoint) await projectedUpTo(this.sql, this.store, 'files', decision.checkpoint);
    await this.blobs.remove(row.blob_key);
    return { id: fileId, object: 'file' as const, deleted: true as const };
  }
}

type FileUploadedData = z.infer<typeof FileUploaded>;

function toFileObject(file: FileUploadedData & { createdAt: Date }): FileObject {
  return {
    id: file.fileId,
    object: 'file',
    bytes: file.bytes,
    created_at: Math.floor(file.createdAt.getTime() / 1000),
    filename: file.filename,
    purpose: file.purpose,
    status: 'processed',
    expires_at: null,
    status_details: null,
  };
}

function fromRow(row: FileRow): FileObject {
  return {
    id: row.file_id,
    object: 'file',
    bytes: Number(row.bytes),
    created_at: Math.floor(row.created_at.getTime() / 1000),
    filename: row.filename,
    purpose: row.purpose,
    status: 'processed',
    expires_at: null,
    status_details: null,
  };
}
