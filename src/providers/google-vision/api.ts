import type { ModalityUpstream } from '../../contracts/modality.ts';
import { endpointUrl } from '../http.ts';

/**
 * Google Cloud Vision's REST API, called with an API key (`x-goog-api-key`, which Google's APIs take beside the `key`
 * query parameter). The base URL has no version path.
 */
export const GOOGLE_VISION_BASE_URL = 'https://vision.googleapis.com';

export function visionEndpoint(upstream: ModalityUpstream, path: '/v1/images:annotate') {
  return { url: endpointUrl(upstream.baseUrl, path), headers: { 'x-goog-api-key': upstream.apiKey } };
}
