import type { ModalityUpstream } from '../../contracts/modality.ts';

/**
 * ElevenLabs' API. Its base URL has no version path (`https://api.elevenlabs.io`); an ELEVENLABS_BASE_URL given
 * with `/v1` is trimmed back to the root. Keys go in the `xi-api-key` header.
 */
export const ELEVENLABS_BASE_URL = 'https://api.elevenlabs.io';

export function elevenLabsEndpoint(upstream: ModalityUpstream, path: string) {
  const root = upstream.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  return { url: `${root}${path}`, headers: { 'xi-api-key': upstream.apiKey } };
}

/**
 * ElevenLabs' error bodies: `{detail: {status, message}}` for refusals (a bad key, a missing voice, quota), and
 * FastAPI's `{detail: [{loc, msg, type}]}` for a request that fails validation (422).
 */
export function elevenLabsError(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { detail } = body as { detail?: unknown };
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) {
    const issues = detail
      .map((issue: { loc?: unknown; msg?: unknown }) =>
        typeof issue?.msg === 'string'
          ? `${Array.isArray(issue.loc) ? `${issue.loc.join('.')}: ` : ''}${issue.msg}`
          : undefined,
      )
      .filter((text): text is string => text !== undefined);
    return issues.length > 0 ? issues.join('; ') : undefined;
  }
  if (typeof detail === 'object' && detail !== null) {
    const { message, status } = detail as { message?: unknown; status?: unknown };
    if (typeof message === 'string') return typeof status === 'string' ? `${status}: ${message}` : message;
  }
  return undefined;
}
