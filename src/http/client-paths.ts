import type { IncomingMessage } from 'node:http';

/** `/v1/v1/messages...`: what Anthropic's SDKs call when given the spec's base address (ending in `/v1`). */
const DOUBLED_VERSION = /^\/v1\/v1\/messages(?:[/?]|$)/;

/**
 * Paths rewritten before routing, so that a client of a provider's format works by changing only its base
 * address: Anthropic's SDKs append `/v1/messages` to their base URL, so the base address the spec gives
 * (`…/v1`, as OpenAI's SDKs take it) makes them call `/v1/v1/messages` and `/v1/v1/messages/count_tokens`.
 */
export function clientPath(request: IncomingMessage): string {
  const url = request.url ?? '/';
  return DOUBLED_VERSION.test(url) ? url.slice('/v1'.length) : url;
}
