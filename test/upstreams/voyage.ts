import { type Incoming, type Reply, startUpstream } from './harness.ts';
import { ranking, strings, tokens, vector } from './modality-model.ts';
import { isObj } from './model.ts';
import type { Upstream } from './types.ts';

/**
 * Voyage AI's `POST /v1/embeddings` and `POST /v1/rerank`, answered from modality-model.ts. Usage is `total_tokens`;
 * for rerank it is counted as Voyage documents it: query tokens × documents + document tokens. The base URL is
 * `${url}/v1`. Errors are FastAPI's `{detail}`.
 */
export function startVoyageUpstream(): Promise<Upstream> {
  return startUpstream({ handle, errorReply, rateLimited });
}

function handle(request: Incoming): Reply {
  const route = `${request.method} ${request.path}`;
  if (route !== 'POST /v1/embeddings' && route !== 'POST /v1/rerank') return error(404, 'Not Found');
  if (!/^Bearer\s+\S+/i.test(request.headers.authorization ?? '')) return errorReply(401);
  const body = request.body;
  if (request.invalidJson || !isObj(body)) return error(400, 'Request body is not valid JSON.');
  if (typeof body.model !== 'string') return error(400, "Request body is missing the 'model' field.");
  if (route === 'POST /v1/embeddings') {
    const inputs = typeof body.input === 'string' ? [body.input] : strings(body.input);
    if (!inputs) return error(400, "Value of 'input' must be a string or a list of strings.");
    if (!body.model.startsWith('voyage')) return error(400, `Model ${body.model} is not supported.`);
    const dimensions = typeof body.output_dimension === 'number' ? body.output_dimension : undefined;
    return {
      status: 200,
      body: {
        object: 'list',
        data: inputs.map((text, index) => ({
          object: 'embedding',
          embedding: vector(text, dimensions),
          index,
        })),
        model: body.model,
        usage: { total_tokens: inputs.reduce((sum, text) => sum + tokens(text), 0) },
      },
    };
  }
  const documents = strings(body.documents);
  if (typeof body.query !== 'string' || !documents) {
    return error(400, "Request body must have a string 'query' and a list of strings 'documents'.");
  }
  if (!body.model.startsWith('rerank')) return error(400, `Model ${body.model} is not supported.`);
  const topK = typeof body.top_k === 'number' ? body.top_k : documents.length;
  const total = tokens(body.query) * documents.length + documents.reduce((sum, d) => sum + tokens(d), 0);
  return {
    status: 200,
    body: {
      object: 'list',
      data: ranking(body.query, documents)
        .slice(0, topK)
        .map(({ index, score }) => ({ index, relevance_score: score })),
      model: body.model,
      usage: { total_tokens: total },
    },
  };
}

function error(status: number, detail: string, headers: Record<string, string> = {}): Reply {
  return { status, headers, body: { detail } };
}

function errorReply(status: number): Reply {
  if (status === 401) return error(401, 'Provided API key is invalid.');
  return error(status, status >= 500 ? 'Internal server error.' : 'Bad request.');
}

function rateLimited(retryAfterSeconds: number): Reply {
  return error(429, 'You have exceeded the rate limit.', { 'retry-after': String(retryAfterSeconds) });
}
