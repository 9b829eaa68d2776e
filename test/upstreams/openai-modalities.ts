import { type Incoming, type Reply, startUpstream } from './harness.ts';
import { meaningVector } from './meaning-embedding.ts';
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
 * OpenAI's embeddings and moderations endpoints (`POST /v1/embeddings`, `POST /v1/moderations`), answered from
 * modality-model.ts (`text-embedding-3-large` from meaning-embedding.ts). The gateway's base URL is `${url}/v1`, as OPENAI_BASE_URL is. Chat lives in openai.ts.
 */
export function startOpenAiModalitiesUpstream(): Promise<Upstream> {
  return startUpstream({ handle, errorReply, rateLimited });
}

const EMBEDDING_MODELS = ['text-embedding-3-small', 'text-embedding-3-large', 'text-embedding-ada-002'];
const MODERATION_MODELS = ['omni-moderation-latest', 'omni-moderation-2024-09-26', 'text-moderation-latest'];

/** Every category of omni-moderation, in OpenAI's order. */
const OPENAI_CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
] as const;

const CATEGORY_OF: Record<SimCategory, (typeof OPENAI_CATEGORIES)[number]> = {
  violence: 'violence',
  hate: 'hate',
  illicit: 'illicit',
};

function handle(request: Incoming): Reply {
  const { seq } = request;
  const route = `${request.method} ${request.path}`;
  if (route !== 'POST /v1/embeddings' && route !== 'POST /v1/moderations') {
    return error(404, { message: `Invalid URL (${route})` });
  }
  if (!/^Bearer\s+\S+/i.test(request.headers.authorization ?? '')) return errorReply(401);
  const body = request.body;
  if (request.invalidJson || !isObj(body))
    return error(400, { message: 'We could not parse the JSON body.' });
  const inputs = typeof body.input === 'string' ? [body.input] : strings(body.input);
  if (!inputs) {
    return error(400, { message: "'$.input' is invalid. Please check the API reference.", param: 'input' });
  }
  return route === 'POST /v1/embeddings' ? embeddings(body, inputs) : moderations(body, inputs, seq);
}

function embeddings(body: Record<string, unknown>, inputs: string[]): Reply {
  const model = body.model;
  if (typeof model !== 'string' || !EMBEDDING_MODELS.includes(model)) {
    return error(404, { message: `The model \`${String(model)}\` does not exist`, code: 'model_not_found' });
  }
  if (body.dimensions !== undefined && !model.startsWith('text-embedding-3')) {
    return error(400, { message: 'This model does not support specifying dimensions.', param: 'dimensions' });
  }
  const dimensions = typeof body.dimensions === 'number' ? body.dimensions : undefined;
  const base64 = body.encoding_format === 'base64';
  const promptTokens = inputs.reduce((sum, text) => sum + tokens(text), 0);
  return {
    status: 200,
    body: {
      object: 'list',
      data: inputs.map((text, index) => {
        // text-embedding-3-large is the simulators' meaning model (meaning-embedding.ts); the others hash the text.
        const values =
          model === 'text-embedding-3-large' ? meaningVector(text, dimensions) : vector(text, dimensions);
        return {
          object: 'embedding',
          index,
          embedding: base64 ? Buffer.from(new Float32Array(values).buffer).toString('base64') : values,
        };
      }),
      model,
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
    },
  };
}

function moderations(body: Record<string, unknown>, inputs: string[], seq: number): Reply {
  const model = body.model ?? 'omni-moderation-latest';
  if (typeof model !== 'string' || !MODERATION_MODELS.includes(model)) {
    return error(404, { message: `The model \`${String(model)}\` does not exist`, code: 'model_not_found' });
  }
  const results = inputs.map((text) => {
    const flagged = new Set([...flaggedCategories(text)].map((c) => CATEGORY_OF[c]));
    const pick = <T>(on: T, off: T) =>
      Object.fromEntries(OPENAI_CATEGORIES.map((c) => [c, flagged.has(c) ? on : off]));
    return {
      flagged: flagged.size > 0,
      categories: pick(true, false),
      category_scores: pick(FLAGGED_SCORE, CLEAN_SCORE),
      category_applied_input_types: pick(['text'], ['text']),
    };
  });
  return { status: 200, body: { id: `modr-sim${seq}`, model: `${model}-sim`, results } };
}

interface ErrorFields {
  message: string;
  type?: string;
  param?: string;
  code?: string;
}

function error(status: number, fields: ErrorFields, headers: Record<string, string> = {}): Reply {
  const { message, type = 'invalid_request_error', param = null, code = null } = fields;
  return { status, headers, body: { error: { message, type, param, code } } };
}

function errorReply(status: number): Reply {
  if (status === 401) return error(401, { message: 'Incorrect API key provided.', code: 'invalid_api_key' });
  return status >= 500
    ? error(status, {
        message: 'The server had an error while processing your request.',
        type: 'server_error',
      })
    : error(status, { message: 'Request failed.' });
}

function rateLimited(retryAfterSeconds: number): Reply {
  return error(
    429,
    {
      message: 'Rate limit reached for requests per min (RPM).',
      type: 'requests',
      code: 'rate_limit_exceeded',
    },
    { 'retry-after': String(retryAfterSeconds) },
  );
}
