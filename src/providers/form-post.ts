import { Agent, errors, type FormData, request } from 'undici';
import { failureOf, parseRetryAfter, UpstreamError } from './errors.ts';
import type { UpstreamResponse } from './http.ts';

const agent = new Agent({ keepAliveTimeout: 30_000, connections: 64, pipelining: 1 });

export interface FormRequest {
  url: string;
  headers: Record<string, string>;
  /** Files in it are file-backed Blobs, read from disk as the body is sent. */
  form: FormData;
  timeoutMs: number;
  signal: AbortSignal;
  /** The provider's message inside its error body, or undefined when it has none. */
  errorMessage(text: string): string | undefined;
}

/**
 * POSTs multipart/form-data upstream (the boundary and content type are set from the form). As postJson: a non-2xx
 * answer becomes an UpstreamError with the provider's message, and the timeout covers the wait for the headers.
 */
export async function postForm(req: FormRequest): Promise<UpstreamResponse> {
  let response: Awaited<ReturnType<typeof request>>;
  try {
    response = await request(req.url, {
      method: 'POST',
      dispatcher: agent,
      headers: req.headers,
      body: req.form,
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
    req.errorMessage(text) ?? (text.trim().slice(0, 500) || `the provider answered ${response.statusCode}`),
    response.statusCode,
    parseRetryAfter(response.headers['retry-after']),
  );
}
