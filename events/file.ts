import { z } from 'zod';

/** Events of the `file-{fileId}` stream: one stored file (its bytes live in the blob store under `blobKey`). */

/**
 * The purposes an upload may name: OpenAI's (its `POST /files` takes assistants, batch, fine-tune, vision, user_data
 * and evals) and `batch_output`, which the spec lists. Values are only ever added, so older events still parse.
 */
export const FilePurpose = z.enum([
  'batch',
  'batch_output',
  'fine-tune',
  'assistants',
  'user_data',
  'vision',
  'evals',
]);
export type FilePurpose = z.infer<typeof FilePurpose>;

/** What a stored file may be: an upload's purpose, or `job_output` for a job's result (written by the gateway). */
export const StoredFilePurpose = z.enum([...FilePurpose.options, 'job_output']);

/** Appended only once the bytes are stored in full. */
export const FileUploaded = z.object({
  fileId: z.string(),
  accountId: z.string(),
  /** The sub-account whose key uploaded it; null for the account's own keys. */
  subAccountId: z.string().nullable(),
  filename: z.string(),
  bytes: z.number().int().nonnegative(),
  purpose: StoredFilePurpose,
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  blobKey: z.string(),
  contentType: z.string(),
  /** The batch that wrote it, for purpose batch_output; null for uploads. */
  batchId: z.string().nullable(),
});

/** The file is gone from the API at once; its bytes are removed after this event is stored. */
export const FileDeleted = z.object({
  fileId: z.string(),
  accountId: z.string(),
});

export const fileEventSchemas = { FileUploaded, FileDeleted } as const;

type Of<T extends keyof typeof fileEventSchemas> = { type: T; data: z.infer<(typeof fileEventSchemas)[T]> };
export type FileEvent = Of<'FileUploaded'> | Of<'FileDeleted'>;

export const fileStream = (fileId: string) => `file-${fileId}`;
