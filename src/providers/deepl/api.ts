import type { ModalityUpstream } from '../../contracts/modality.ts';
import { endpointUrl } from '../http.ts';

/**
 * DeepL's API has two hosts: API Pro keys call `api.deepl.com`, API Free keys (their key ends in `:fx`) call
 * `api-free.deepl.com` (https://developers.deepl.com/docs/getting-started/auth). The base URL has no version path.
 */
export const DEEPL_BASE_URL = 'https://api.deepl.com';
export const DEEPL_FREE_BASE_URL = 'https://api-free.deepl.com';

export function deeplEndpoint(upstream: ModalityUpstream, path: '/v2/translate') {
  // A DEEPL_BASE_URL set by the operator is used as it is; only the default follows the key's plan.
  const base =
    upstream.baseUrl === DEEPL_BASE_URL && upstream.apiKey.endsWith(':fx')
      ? DEEPL_FREE_BASE_URL
      : upstream.baseUrl;
  return {
    url: endpointUrl(base, path),
    headers: { authorization: `DeepL-Auth-Key ${upstream.apiKey}` },
  };
}
