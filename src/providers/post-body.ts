import type { Readable } from 'node:stream';
import type { FormData } from 'undici';
import { mediaAgent, sendUpstream, type UpstreamResponse } from './http.ts';

export interface BodyRequest {
  url: string;
  headers: Record<string, string>;
  /**
   * A multipart form (file parts may be file-backed Blobs, read from disk as they are sent), a byte stream (sent as
   * is, with `headers['content-type']`), or a JSON value.
   */
  body: FormData | Readable | { json: unknown };
  /** The byte stream's length, when known (sent as Content-Length instead of chunked). */
  contentLength?: number;
  /** How long to wait for the response headers. */
  timeoutMs: number;
  signal: AbortSignal;
  /** The provider's message inside its error body, for formats the common reader does not know. */
  errorMessage?: (body: unknown) => string | undefined;
}

/**
 * POSTs a media body upstream and hands back the response unread (a transcript to parse, or audio to stream on). A
 * non-2xx answer becomes an UpstreamError with the provider's own message, as `postJson` does for JSON calls.
 */
export function postBody(req: BodyRequest): Promise<UpstreamResponse> {
  const json = 'json' in req.body;
  const own = req.errorMessage;
  return sendUpstream({
    method: 'POST',
    url: req.url,
    headers: {
      ...(json ? { 'content-type': 'application/json' } : {}),
      ...(req.contentLength === undefined ? {} : { 'content-length': String(req.contentLength) }),
      ...req.headers,
    },
    body: 'json' in req.body ? JSON.stringify(req.body.json) : req.body,
    timeoutMs: req.timeoutMs,
    signal: req.signal,
    dispatcher: mediaAgent,
    errorMessage: own && ((text) => ownMessage(text, own)),
  });
}

function ownMessage(text: string, own: (body: unknown) => string | undefined): string | undefined {
  try {
    return own(JSON.parse(text));
  } catch {
    return undefined;
  }
}
