import { DomainError } from '../../commands/errors.ts';
import { RequestRefused } from '../contracts/errors.ts';
import { allowPrivateUrls, checkRemoteUrl, UrlRefused } from '../net/url-guard.ts';

const MAX_URL_LENGTH = 2048;

/**
 * Checks a client's `webhook_url` at submission: http(s) only, no credentials, and a host that resolves only to
 * public addresses (unless GATEWAY_ALLOW_PRIVATE_URLS=true). Every delivery checks again when it connects, so a
 * name that later resolves to a private address is still refused then. Returns the URL as normalised; throws a
 * 400 naming 'webhook_url'.
 */
export async function checkWebhookUrl(
  raw: string,
  env: NodeJS.ProcessEnv,
  field = 'webhook_url',
): Promise<string> {
  if (raw.length > MAX_URL_LENGTH)
    throw new RequestRefused('invalid', `'${field}': at most ${MAX_URL_LENGTH} characters`);
  try {
    return (await checkRemoteUrl(raw, allowPrivateUrls(env))).toString();
  } catch (error) {
    if (error instanceof UrlRefused) throw new RequestRefused('invalid', `'${field}': ${error.message}`);
    throw error;
  }
}

/** The same check for the operator's account endpoint, refused as a domain error (the CLI's direct mode too). */
export async function checkEndpointUrl(raw: string, env: NodeJS.ProcessEnv): Promise<string> {
  try {
    return (await checkRemoteUrl(raw, allowPrivateUrls(env))).toString();
  } catch (error) {
    if (error instanceof UrlRefused) throw new DomainError('invalid', `'url': ${error.message}`, 'url');
    throw error;
  }
}
