import type { z } from 'zod';
import type { BatchCreated } from '../../events/batch.ts';
import type { ChatCompletionRequest } from '../chat/request.ts';
import type { ChatBody } from '../contracts/chat.ts';
import type { BlobStore } from '../files/blob-store.ts';
import { fileBlobKey } from '../files/service.ts';
import { inputLines, parseInputLine } from './input.ts';

/** The request bodies of some lines, read again from the input file (they are not kept in the events). */
export async function lineBodies(
  blobs: BlobStore,
  batch: Pick<z.infer<typeof BatchCreated>, 'inputFileId' | 'endpoint'>,
  wanted: Set<number>,
): Promise<Map<number, ChatCompletionRequest>> {
  const found = new Map<number, ChatCompletionRequest>();
  if ((await blobs.size(fileBlobKey(batch.inputFileId))) === undefined) return found;
  const seen = new Set<string>();
  for await (const { line, text } of inputLines(blobs.read(fileBlobKey(batch.inputFileId)))) {
    const parsed = parseInputLine(line, text, batch.endpoint, seen);
    if (parsed.valid && wanted.has(line)) found.set(line, parsed.body as ChatCompletionRequest);
  }
  return found;
}

/** The chat body a line sends upstream: the client's, with the output limit its hold was priced on. */
export function upstreamBody(body: ChatCompletionRequest | undefined, maxTokens: number): ChatBody {
  const { max_completion_tokens: _ignored, ...rest } = (body ?? { messages: [] }) as ChatCompletionRequest;
  return { ...(rest as ChatBody), max_tokens: maxTokens };
}
