import { type Incoming, type Reply, startUpstream } from './harness.ts';
import { vector } from './modality-model.ts';
import { isObj, list } from './model.ts';
import type { Upstream } from './types.ts';

/**
 * Google's `POST /v1beta/models/{model}:batchEmbedContents`, answered from modality-model.ts. Like the real API it
 * reports no token counts. The base URL is `url` (no version path), as GOOGLE_BASE_URL is.
 */
export function startGeminiEmbedUpstream(): Promise<Upstream> {
  return startUpstream({ handle, errorReply, rateLimited });
}

const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

function handle(request: Incoming): Reply {
  const match = /^\/v1beta\/(models\/[^/:]+):batchEmbedContents$/.exec(request.path);
  if (request.method !== 'POST' || !match) return error(404, `Method not found: ${request.path}`);
  if (!request.headers['x-goog-api-key']) {
    return error(
      403,
      "Method doesn't allow unregistered callers. Please use API Key or other form of API consumer identity to call this API.",
    );
  }
  const resource = match[1] as string;
  if (!resource.includes('embedding')) return error(404, `${resource} is not found for API version v1beta.`);
  const body = request.body;
  if (request.invalidJson || !isObj(body) || !Array.isArray(body.requests)) {
    return error(400, 'Invalid JSON payload received. Unknown name "input": Cannot find field.');
  }
  if (body.requests.length > 100) {
    return error(400, '* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch');
  }
  const embeddings = [];
  for (const [i, item] of body.requests.entries()) {
    if (!isObj(item) || item.model !== resource) {
      return error(
        400,
        `* BatchEmbedContentsRequest.requests[${i}].model: the model must match the model in the URL.`,
      );
    }
    const parts = isObj(item.content) ? list(item.content.parts) : [];
    const text = parts.map((p) => (isObj(p) && typeof p.text === 'string' ? p.text : '')).join('');
    const dimensions = typeof item.outputDimensionality === 'number' ? item.outputDimensionality : undefined;
    embeddings.push({ values: vector(text, dimensions) });
  }
  return { status: 200, body: { embeddings } };
}

function error(code: number, message: string, details?: unknown[]): Reply {
  const status = STATUS[code] ?? (code >= 500 ? 'INTERNAL' : 'UNKNOWN');
  return { status: code, body: { error: { code, message, status, ...(details && { details }) } } };
}

function errorReply(status: number): Reply {
  return error(
    status,
    status >= 500 ? 'An internal error has occurred.' : 'Request contains an invalid argument.',
  );
}

function rateLimited(retryAfterSeconds: number): Reply {
  return error(429, 'You exceeded your current quota.', [
    { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${retryAfterSeconds}s` },
  ]);
}
