import { type Incoming, type Reply, startUpstream } from './harness.ts';
import { ocrReply } from './mistral-ocr.ts';
import {
  CLEAN_SCORE,
  FLAGGED_SCORE,
  flaggedCategories,
  type SimCategory,
  strings,
  tokens,
  vector,
} from './modality-model.ts';
import { isObj } from './model.ts';
import type { Upstream } from './types.ts';

/**
 * Mistral's `POST /v1/embeddings` (OpenAI's shape) and `POST /v1/moderations` (its own nine policy categories,
 * no `flagged`, usage reported), answered from modality-model.ts, and `POST /v1/ocr` (mistral-ocr.ts). The base URL
 * is `${url}/v1`.
 */
export function startMistralUpstream(): Promise<Upstream> {
  return startUpstream({ handle, errorReply, rateLimited });
}

const MISTRAL_CATEGORIES = [
  'sexual',
  'hate_and_discrimination',
  'violence_and_threats',
  'dangerous_and_criminal_content',
  'selfharm',
  'health',
  'financial',
  'law',
  'pii',
] as const;

const CATEGORY_OF: Record<SimCategory, (typeof MISTRAL_CATEGORIES)[number]> = {
  violence: 'violence_and_threats',
  hate: 'hate_and_discrimination',
  illicit: 'dangerous_and_criminal_content',
};

function handle(request: Incoming): Reply {
  const route = `${request.method} ${request.path}`;
  if (route === 'POST /v1/ocr') {
    if (!/^Bearer\s+\S+/i.test(request.headers.authorization ?? '')) return errorReply(401);
    return ocrReply(request, error);
  }
  if (route !== 'POST /v1/embeddings' && route !== 'POST /v1/moderations') {
    return { status: 404, body: { detail: 'Not Found' } };
  }
  if (!/^Bearer\s+\S+/i.test(request.headers.authorization ?? '')) return errorReply(401);
  const body = request.body;
  if (request.invalidJson || !isObj(body)) return error(400, 'Invalid JSON body');
  const inputs = typeof body.input === 'string' ? [body.input] : strings(body.input);
  if (!inputs) return error(422, 'input: Input should be a valid string or list of strings');
  const model = body.model;
  if (typeof model !== 'string') return error(422, 'model: Field required');
  const promptTokens = inputs.reduce((sum, text) => sum + tokens(text), 0);
  const usage = { prompt_tokens: promptTokens, total_tokens: promptTokens, completion_tokens: 0 };
  const id = `sim${request.seq}`;
  if (route === 'POST /v1/embeddings') {
    if (!model.endsWith('embed')) return error(400, `Invalid model: ${model}`);
    const dimensions = typeof body.output_dimension === 'number' ? body.output_dimension : undefined;
    const data = inputs.map((text, index) => ({
      object: 'embedding',
      embedding: vector(text, dimensions),
      index,
    }));
    return { status: 200, body: { id, object: 'list', data, model, usage } };
  }
  if (!model.startsWith('mistral-moderation')) return error(400, `Invalid model: ${model}`);
  const results = inputs.map((text) => {
    const flagged = new Set([...flaggedCategories(text)].map((c) => CATEGORY_OF[c]));
    const pick = <T>(on: T, off: T) =>
      Object.fromEntries(MISTRAL_CATEGORIES.map((c) => [c, flagged.has(c) ? on : off]));
    return { categories: pick(true, false), category_scores: pick(FLAGGED_SCORE, CLEAN_SCORE) };
  });
  return { status: 200, body: { id, model, results, usage } };
}

function error(status: number, message: string, headers: Record<string, string> = {}): Reply {
  return {
    status,
    headers,
    body: { object: 'error', message, type: 'invalid_request_error', param: null, code: null },
  };
}

function errorReply(status: number): Reply {
  if (status === 401) return { status, body: { message: 'Unauthorized', request_id: 'sim' } };
  return error(status, status >= 500 ? 'Service unavailable.' : 'Bad request.');
}

function rateLimited(retryAfterSeconds: number): Reply {
  return error(429, 'Requests rate limit exceeded', { 'retry-after': String(retryAfterSeconds) });
}
