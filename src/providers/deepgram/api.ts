import type { ModalityUpstream } from '../../contracts/modality.ts';

/**
 * Deepgram's API. Its base URL has no version path (`https://api.deepgram.com`); a DEEPGRAM_BASE_URL given with
 * `/v1` is trimmed back to the root. Keys go in `Authorization: Token <key>`.
 */
export const DEEPGRAM_BASE_URL = 'https://api.deepgram.com';

export function deepgramEndpoint(upstream: ModalityUpstream, path: '/v1/listen') {
  const root = upstream.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  return { url: `${root}${path}`, headers: { authorization: `Token ${upstream.apiKey}` } };
}

/**
 * Deepgram's error bodies: `{err_code, err_msg, request_id}` on the listen API, and `{category, message, details}`
 * on newer ones.
 */
export function deepgramError(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { err_msg, message, details } = body as Record<string, unknown>;
  if (typeof err_msg === 'string') return err_msg;
  if (typeof message === 'string') return typeof details === 'string' ? `${message} ${details}` : message;
  return undefined;
}
