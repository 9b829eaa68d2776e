import { z } from 'zod';
import type { ModalityUpstream } from '../../contracts/modality.ts';
import { endpointUrl } from '../http.ts';

/** Voyage AI's API; like OpenAI's, its base URL includes the version path. */
export const VOYAGE_BASE_URL = 'https://api.voyageai.com/v1';

export function voyageEndpoint(upstream: ModalityUpstream, path: '/embeddings' | '/rerank') {
  return {
    url: endpointUrl(upstream.baseUrl, path),
    headers: { authorization: `Bearer ${upstream.apiKey}` },
  };
}

/** Voyage reports one figure for every call, embeddings and rerank alike. */
export const VoyageUsage = z.object({ total_tokens: z.unknown() }).partial().nullish();
