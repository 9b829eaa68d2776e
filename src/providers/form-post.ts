import type { FormData } from 'undici';
import { mediaAgent, sendUpstream, type UpstreamResponse } from './http.ts';

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
 * POSTs multipart/form-data upstream (the boundary and content type are set from the form), on the media pool,
 * with sendUpstream's error mapping.
 */
export function postForm(req: FormRequest): Promise<UpstreamResponse> {
  return sendUpstream({
    method: 'POST',
    url: req.url,
    headers: req.headers,
    body: req.form,
    timeoutMs: req.timeoutMs,
    signal: req.signal,
    dispatcher: mediaAgent,
    errorMessage: req.errorMessage,
  });
}
