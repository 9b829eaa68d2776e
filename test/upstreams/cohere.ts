import { type Incoming, type Reply, startUpstream } from './harness.ts';
import { ranking, strings, tokens, vector } from './modality-model.ts';
import { isObj } from './model.ts';
import type { Upstream } from './types.ts';

/**
 * Cohere's native v2 API: `POST /v2/embed` (float embeddings by type, `input_type` required) and `POST /v2/rerank`
 * (billed in search units: one per 100 documents), answered from modality-model.ts. The base URL is `url`.
 */
export function startCohereUpstream(): Promise<Upstream> {
  return startUpstream({ handle, errorReply, rateLimited });
}

const meta = (billed: Record<string, number>) => ({ api_version: { version: '2' }, billed_units: billed });

function handle(request: Incoming): Reply {
  const route = `${request.method} ${request.path}`;
  if (route !== 'POST /v2/embed' && route !== 'POST /v2/rerank')
    return error(404, `route ${route} not found`);
  if (!/^Bearer\s+\S+/i.test(request.headers.authorization ?? '')) return errorReply(401);
  const body = request.body;
  if (request.invalidJson || !isObj(body)) return error(400, 'invalid request: could not parse JSON body');
  if (typeof body.model !== 'string') return error(400, 'invalid request: model must be a string');
  const id = `sim-${request.seq}`;
  if (route === 'POST /v2/embed') {
    const texts = strings(body.texts);
    if (!texts) return error(400, 'invalid request: texts must be a list of strings');
    if (texts.length > 96) return error(400, 'invalid request: texts cannot have more than 96 elements');
    if (!body.model.startsWith('embed')) return error(404, `model '${body.model}' not found`);
    if (typeof body.input_type !== 'string') {
      return error(400, 'invalid request: valid input_type must be provided with the provided model');
    }
    const dimensions = typeof body.output_dimension === 'number' ? body.output_dimension : undefined;
    return {
      status: 200,
      body: {
        id,
        embeddings: { float: texts.map((text) => vector(text, dimensions)) },
        texts,
        meta: meta({ input_tokens: texts.reduce((sum, text) => sum + tokens(text), 0) }),
        response_type: 'embeddings_by_type',
      },
    };
  }
  const documents = strings(body.documents);
  if (typeof body.query !== 'string' || !documents) {
    return error(400, 'invalid request: query and documents are required');
  }
  if (!body.model.startsWith('rerank')) return error(404, `model '${body.model}' not found`);
  const topN = typeof body.top_n === 'number' ? body.top_n : documents.length;
  const results = ranking(body.query, documents)
    .slice(0, topN)
    .map(({ index, score }) => ({ index, relevance_score: score }));
  return {
    status: 200,
    body: { id, results, meta: meta({ search_units: Math.ceil(documents.length / 100) }) },
  };
}

function error(status: number, message: string, headers: Record<string, string> = {}): Reply {
  return { status, headers, body: { id: 'sim-error', message } };
}

function errorReply(status: number): Reply {
  if (status === 401) return error(401, 'invalid api token');
  return error(status, status >= 500 ? 'internal server error' : 'invalid request');
}

function rateLimited(retryAfterSeconds: number): Reply {
  return error(429, 'You are using a Trial key, which is limited to 10 API calls / minute.', {
    'retry-after': String(retryAfterSeconds),
  });
}
