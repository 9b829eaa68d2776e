import type { Readable } from 'node:stream';
import { Agent, errors, type FormData, request } from 'undici';
import { failureOf, parseRetryAfter, UpstreamError } from './errors.ts';
import type { UpstreamResponse } from './http.ts';

/** Keep-alive connections for media uploads and downloads, apart from the JSON pool so long transfers do not crowd it. */
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 64, pipelining: 1 });

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
export async function postBody(req: BodyRequest): Promise<UpstreamResponse> {
  const json = 'json' in req.body;
  let response: Awaited<ReturnType<typeof request>>;
  try {
    response = await request(req.url, {
      method: 'POST',
      dispatcher: agent,
      headers: {
        ...(json ? { 'content-type': 'application/json' } : {}),
        ...(req.contentLength === undefined ? {} : { 'content-length': String(req.contentLength) }),
        ...req.headers,
      },
      body: 'json' in req.body ? JSON.stringify(req.body.json) : req.body,
      headersTimeout: req.timeoutMs,
      bodyTimeout: Math.max(req.timeoutMs, 300_000),
      signal: req.signal,
    });
  } catch (error) {
    if (error instanceof errors.HeadersTimeoutError) {
      throw new UpstreamError('timeout', `the provider did not answer within ${req.timeoutMs} ms`);
    }
    if (req.signal.aborted) throw error;
    throw new UpstreamError('network', `could not reach the provider: ${(error as Error).message}`);
  }
  if (response.statusCode >= 200 && response.statusCode < 300) {
    return { status: response.statusCode, headers: response.headers, body: response.body };
  }
  const text = await response.body.text().catch(() => '');
  throw new UpstreamError(
    failureOf(response.statusCode),
    errorText(text, req.errorMessage) ?? `the provider answered ${response.statusCode}`,
    response.statusCode,
    parseRetryAfter(response.headers['retry-after']),
  );
}

function errorText(text: string, own: BodyRequest['errorMessage']): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return text.trim().slice(0, 500) || undefined;
  }
  return own?.(body) ?? commonMessage(body) ?? text.trim().slice(0, 500);
}

/** `{error:{message}}` (OpenAI and its copies), `{error:"..."}`, `{message}`. */
function commonMessage(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { error, message } = body as { error?: { message?: unknown } | string; message?: unknown };
  if (typeof error === 'string') return error;
  if (typeof error?.message === 'string') return error.message;
  return typeof message === 'string' ? message : undefined;
}
