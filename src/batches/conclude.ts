import type { z } from 'zod';
import { isSuccess } from '../../commands/batch/decide.ts';
import type { BatchCommands } from '../../commands/batch/handler.ts';
import type { BatchCreated } from '../../events/batch.ts';
import type { EventStore } from '../../events/store.ts';
import type { BlobStore } from '../files/blob-store.ts';
import { type FilesService, fileBlobKey } from '../files/service.ts';
import { inputLines, parseInputLine } from './input.ts';
import { errorLine, finishedLines, outputLine, resultFileId } from './output.ts';
import { loadBatch } from './state.ts';

export interface ConcludeDeps {
  store: EventStore;
  blobs: BlobStore;
  files: FilesService;
  commands: BatchCommands;
  clock: () => Date;
}

const UNRUN = {
  expired: {
    code: 'batch_expired',
    message: 'This request could not be executed before the completion window expired.',
  },
  cancelled: {
    code: 'batch_cancelled',
    message: 'This request was not executed because the batch was cancelled.',
  },
} as const;

/** Writes the output and error files from the recorded lines, then the batch's last event. */
export async function concludeBatch(
  deps: ConcludeDeps,
  batchId: string,
  as: 'completed' | 'expired' | 'cancelled',
): Promise<void> {
  const state = await loadBatch(deps.store, batchId);
  const batch = state.created as z.infer<typeof BatchCreated>;
  const { store, blobs } = deps;
  const outputId = resultFileId(batchId, 'output');
  const errorId = resultFileId(batchId, 'error');
  let completed = 0;
  let failed = 0;
  const output = await writeFile(blobs, outputId, async function* () {
    for await (const line of finishedLines(store, batchId)) {
      if (line.error || !isSuccess(line.statusCode)) continue;
      completed += 1;
      yield outputLine(batchId, line);
    }
  });
  const unrun = as === 'completed' ? undefined : UNRUN[as];
  const errors = await writeFile(blobs, errorId, async function* () {
    for (const invalid of state.invalid) {
      failed += 1;
      yield errorLine(batchId, invalid.line, invalid.customId, {
        code: 'invalid_request',
        message: invalid.message,
      });
    }
    for await (const line of finishedLines(store, batchId)) {
      if (!line.error && isSuccess(line.statusCode)) continue;
      failed += 1;
      yield outputLine(batchId, line);
    }
    if (!unrun || state.total === 0 || (await blobs.size(fileBlobKey(batch.inputFileId))) === undefined)
      return;
    const seen = new Set<string>();
    for await (const { line, text } of inputLines(blobs.read(fileBlobKey(batch.inputFileId)))) {
      const parsed = parseInputLine(line, text, batch.endpoint, seen);
      if (!parsed.valid || state.finished.has(line)) continue;
      failed += 1;
      yield errorLine(batchId, line, parsed.customId, unrun);
    }
  });
  const owner = { accountId: batch.accountId, subAccountId: batch.subAccountId };
  for (const [fileId, bytes, kind] of [
    [outputId, output, 'output'],
    [errorId, errors, 'error'],
  ] as const) {
    if (!bytes) continue;
    await deps.files.record({
      fileId,
      ...owner,
      filename: `${batchId}_${kind}.jsonl`,
      bytes: bytes.bytes,
      purpose: 'batch_output',
      sha256: bytes.sha256,
      blobKey: fileBlobKey(fileId),
      contentType: 'application/jsonl',
      batchId,
    });
  }
  await deps.commands.handle(
    batchId,
    {
      type: 'Conclude',
      as,
      outcome: {
        outputFileId: output ? outputId : null,
        errorFileId: errors ? errorId : null,
        completed,
        // Every line is in one file or the other: invalid, failed, expired or cancelled lines count as failed.
        failed: Math.max(failed, state.total - completed),
      },
    },
    { now: deps.clock() },
  );
}

/** Streams lines into a blob; undefined (and nothing kept) when there was no line. */
async function writeFile(
  blobs: BlobStore,
  fileId: string,
  lines: () => AsyncGenerator<string>,
): Promise<{ bytes: number; sha256: string } | undefined> {
  let count = 0;
  const body = async function* () {
    for await (const line of lines()) {
      count += 1;
      yield Buffer.from(`${line}\n`);
    }
  };
  const stored = await blobs.write(fileBlobKey(fileId), body());
  if (count > 0) return stored;
  await blobs.remove(fileBlobKey(fileId));
  return undefined;
}
