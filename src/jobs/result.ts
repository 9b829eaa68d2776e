import type { JobOutput } from '../contracts/jobs.ts';
import type { BlobStore } from '../files/blob-store.ts';
import type { FilesService } from '../files/service.ts';
import { contentTypeOf } from '../media/signed-urls.ts';
import type { StoredResult } from './cancel-charge.ts';
import type { QueuedJob } from './service.ts';

/** The file id a job's result is listed under in the Files API. */
export function resultFileId(jobId: string): string {
  return `file-${jobId.replace(/^job_/, 'job')}`;
}

/**
 * Stores a job's result file under the job and lists it in the Files API as the job owner's (recording it again
 * after a crash is a no-op); undefined for a result that is no file (a transcript).
 */
export async function storeResult(
  deps: { blobs: BlobStore; files?: Pick<FilesService, 'record'> },
  job: QueuedJob,
  output: JobOutput,
): Promise<(StoredResult & { bytes: number }) | undefined> {
  if (!output.file) return undefined;
  const { filename } = output.file;
  const blobKey = `jobs/${job.jobId}/${filename}`;
  const { bytes, sha256 } = await deps.blobs.write(blobKey, output.file.body);
  const fileId = resultFileId(job.jobId);
  await deps.files?.record({
    fileId,
    accountId: job.accountId,
    subAccountId: job.subAccountId,
    filename,
    bytes,
    purpose: 'job_output',
    sha256,
    blobKey,
    contentType: contentTypeOf(filename),
    batchId: null,
  });
  return { fileId, filename, bytes };
}
