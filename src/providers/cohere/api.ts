import { z } from 'zod';
import type { ModalityUpstream } from '../../contracts/modality.ts';

/**
 * Cohere's native v2 API. Its base URL has no version path (`https://api.cohere.com`); the chat path reaches
 * Cohere through its OpenAI compatibility layer (`.../compatibility/v1`), so a COHERE_BASE_URL set for chat is
 * trimmed back to the API's root here.
 */
export const COHERE_BASE_URL = 'https://api.cohere.com';

export function cohereEndpoint(upstream: ModalityUpstream, path: '/v2/embed' | '/v2/rerank') {
  const root = upstream.baseUrl.replace(/\/+$/, '').replace(/\/compatibility\/v1$/, '');
  return { url: `${root}${path}`, headers: { authorization: `Bearer ${upstream.apiKey}` } };
}

/** What Cohere bills a call in, under `meta.billed_units`; absent figures stay absent. */
export const CohereMeta = z
  .object({
    billed_units: z.object({ input_tokens: z.unknown(), search_units: z.unknown() }).partial().nullish(),
  })
  .nullish();
