import { createHash } from 'node:crypto';
import type { z } from 'zod';
import type { BatchEvent } from '../../events/batch.ts';
import { type BatchLineFinished, batchStream } from '../../events/batch.ts';
import { parseAs } from '../../events/index.ts';
import { findUnstorableText } from '../../events/storable.ts';
import type { EventStore } from '../../events/store.ts';

type Line = z.infer<typeof BatchLineFinished>;

const hex = (name: string, length: number) =>
  createHash('sha256').update(name).digest('hex').slice(0, length);

/**
 * A line's id in the output (`batch_req_…`) and its request id (its charge's `request_id`), from batch and line.
 * The gateway derives it from the batch's id, which it made; a client's `X-Request-Id` is never a request's id
 * (src/http/request-id.ts), so no client's request can stand for a line.
 */
export const lineRequestId = (batchId: string, line: number) => `${batchId}-${line}`;
/** What every line's request id of the batch starts with. */
export const lineRequestPrefix = (batchId: string) => `${batchId}-`;

/** The batch's line a request id names: `lineRequestId`'s inverse, undefined for any other id. */
export function lineOfRequest(batchId: string, requestId: string): number | undefined {
  const line = Number(requestId.slice(lineRequestPrefix(batchId).length));
  return Number.isSafeInteger(line) && line > 0 && lineRequestId(batchId, line) === requestId
    ? line
    : undefined;
}
export const lineOutputId = (batchId: string, line: number) => `batch_req_${hex(`${batchId}/${line}`, 24)}`;

/** The ids of a batch's result files are derived from the batch, so finalizing twice writes the same files. */
export const resultFileId = (batchId: string, kind: 'output' | 'error') =>
  `file-${hex(`${batchId}/${kind}`, 24)}`;

/**
 * A line's response body as the event keeps it: as is, or as JSON text when it holds what no store can keep
 * (JSON text escapes U+0000 and unpaired surrogates, so it is always storable and loses nothing).
 */
export function keptBody(body: unknown): Pick<Line, 'body' | 'bodyJson'> {
  return findUnstorableText(body) ? { body: null, bodyJson: JSON.stringify(body) } : { body };
}

/** One line of OpenAI's batch output format. */
export function outputLine(batchId: string, line: Line): string {
  const id = lineOutputId(batchId, line.line);
  if (line.error) return JSON.stringify({ id, custom_id: line.customId, response: null, error: line.error });
  const head = JSON.stringify({ id, custom_id: line.customId });
  const response = `{"status_code":${line.statusCode},"request_id":${JSON.stringify(line.requestId)},"body":${line.bodyJson ?? JSON.stringify(line.body ?? null)}}`;
  return `${head.slice(0, -1)},"response":${response},"error":null}`;
}

/** A line that never produced a response (invalid, expired, cancelled), in the error file's format. */
export function errorLine(
  batchId: string,
  line: number,
  customId: string | null,
  error: { code: string; message: string },
): string {
  return JSON.stringify({ id: lineOutputId(batchId, line), custom_id: customId, response: null, error });
}

/** The batch's finished lines as recorded in its stream, page by page (never the whole stream at once). */
export async function* finishedLines(store: EventStore, batchId: string): AsyncGenerator<Line> {
  for (let from = 0; ; ) {
    const page = await store.readStream(batchStream(batchId), { fromRevision: from, maxCount: 500 });
    for (const stored of page) {
      const event = parseAs<BatchEvent>(stored);
      if (event?.type === 'BatchLineFinished') yield event.data;
      from = stored.revision + 1;
    }
    if (page.length < 500) return;
  }
}
