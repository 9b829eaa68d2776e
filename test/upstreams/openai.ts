import { type Incoming, type Provider, type Reply, sse, startUpstream } from './harness.ts';
import { structuredSchema } from './json-schema-sample.ts';
import {
  type Answer,
  answer,
  type Conversation,
  fragments,
  isObj,
  list,
  type Obj,
  pieces,
  reasoningModel,
  str,
  words,
} from './model.ts';
import type { ModelListState } from './model-list.ts';
import { legacyCompletion } from './openai-legacy.ts';
import type { Upstream } from './types.ts';

/**
 * OpenAI's Chat Completions wire format (and so the OpenAI-compatible crowd's), plus DeepSeek's
 * `reasoning_content` for reasoning output. The gateway's base URL is `${url}/v1`, as OPENAI_BASE_URL is.
 */
export function startOpenAiUpstream(): Promise<Upstream> {
  return startUpstream(openAiProvider);
}

/**
 * `GET /v1/models` as OpenAI documents it: `{object: "list", data: [{id, object: "model", created, owned_by}]}`,
 * every model the key can use in one answer (no paging), a Bearer key required.
 */
export function listOpenAiModels(request: Incoming, list: ModelListState): Reply | undefined {
  if (request.method !== 'GET' || request.path !== '/v1/models') return undefined;
  const { seq } = request;
  return list.answer(
    () => {
      if (!/^Bearer\s+\S+/i.test(request.headers.authorization ?? '')) return errorReply(401, seq);
      const data = list
        .ids()
        .map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'system' }));
      return { status: 200, headers: headers(seq), body: { object: 'list', data } };
    },
    (status) => errorReply(status, seq),
  );
}

function handle(request: Incoming): Reply {
  const { method, path, seq } = request;
  const route = `${method} ${path}`;
  if (route === 'POST /v1/completions') return legacyCompletion(request, headers(seq));
  if (route !== 'POST /v1/chat/completions') return error(404, seq, { message: `Invalid URL (${route})` });
  if (!/^Bearer\s+\S+/i.test(request.headers.authorization ?? '')) return errorReply(401, seq);
  const body = request.body;
  if (request.invalidJson || !isObj(body)) {
    return error(400, seq, {
      message:
        "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)",
    });
  }
  if (typeof body.model !== 'string')
    return error(400, seq, { message: 'you must provide a model parameter' });
  if (!Array.isArray(body.messages)) {
    return error(400, seq, {
      message: "Missing required parameter: 'messages'.",
      param: 'messages',
      code: 'missing_required_parameter',
    });
  }
  const result = answer({
    conversation: conversation(body.messages),
    limit: limitOf(body),
    json: ['json_object', 'json_schema'].includes(
      str(isObj(body.response_format) && body.response_format.type) ?? '',
    ),
    schema: structuredSchema(body.response_format),
    toolName: body.tool_choice === 'none' ? undefined : firstToolName(body.tools),
    reasoning: reasoningModel(body.model),
    reply: request.behaviour?.reply,
  });
  const meta = {
    id: `chatcmpl-sim${seq}`,
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    rejectedPrediction: rejectedPrediction(body.prediction),
  };
  if (body.stream === true) {
    const includeUsage = isObj(body.stream_options) && body.stream_options.include_usage === true;
    return {
      status: 200,
      headers: {
        ...headers(seq),
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
      },
      chunks: streamChunks(result, meta, includeUsage),
    };
  }
  // OpenAI answers `n` choices and bills the output of every one.
  const choices = typeof body.n === 'number' && body.n > 1 ? body.n : 1;
  return { status: 200, headers: headers(seq), body: completion(result, meta, choices) };
}

interface Meta {
  id: string;
  created: number;
  model: string;
  /** Words of a predicted output the answer did not use: OpenAI bills them as completion tokens. */
  rejectedPrediction: number;
}

/** The echo never reproduces a prediction, so all of it is rejected (and billed), as OpenAI does. */
function rejectedPrediction(prediction: unknown): number {
  if (!isObj(prediction)) return 0;
  const { content } = prediction;
  const text =
    typeof content === 'string'
      ? content
      : list(content)
          .map((part) => (isObj(part) ? (str(part.text) ?? '') : ''))
          .join(' ');
  return words(text);
}

const finishReasons = { stop: 'stop', length: 'length', tool: 'tool_calls' } as const;

function completion(result: Answer, meta: Meta, choices = 1): Obj {
  const message: Obj = {
    role: 'assistant',
    content: result.text ?? null,
    ...(result.reasoning !== undefined && { reasoning_content: result.reasoning }),
    ...(result.toolCall && {
      tool_calls: [
        {
          id: `call_${meta.id}`,
          type: 'function',
          function: { name: result.toolCall.name, arguments: result.toolCall.argsJson },
        },
      ],
    }),
    refusal: null,
    annotations: [],
  };
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: Array.from({ length: choices }, (_, index) => ({
      index,
      message,
      logprobs: null,
      finish_reason: finishReasons[result.finish],
    })),
    usage: usage(result, choices, meta.rejectedPrediction),
    service_tier: 'default',
    system_fingerprint: 'fp_sim',
  };
}

/** OpenAI's order: role first, deltas, an empty delta with finish_reason, the usage chunk (if asked), [DONE]. */
function streamChunks(result: Answer, meta: Meta, includeUsage: boolean): string[] {
  const deltas: Obj[] = [];
  for (const piece of pieces(result.reasoning ?? ''))
    deltas.push({ content: null, reasoning_content: piece });
  if (result.toolCall) {
    const id = `call_${meta.id}`;
    const name = result.toolCall.name;
    deltas.push({
      content: null,
      tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: '' } }],
    });
    for (const part of fragments(result.toolCall.argsJson)) {
      deltas.push({ tool_calls: [{ index: 0, function: { arguments: part } }] });
    }
  }
  const text = pieces(result.text ?? '');
  // Plain text opens with an empty content delta, as OpenAI does; otherwise the role rides on the first delta.
  if (deltas.length === 0) deltas.push({ content: '' });
  for (const piece of text) deltas.push({ content: piece });
  deltas[0] = { role: 'assistant', ...deltas[0], refusal: null };

  const chunk = (choices: Obj[], extra: Obj = {}): string =>
    sse({
      id: meta.id,
      object: 'chat.completion.chunk',
      created: meta.created,
      model: meta.model,
      service_tier: 'default',
      system_fingerprint: 'fp_sim',
      choices,
      ...(includeUsage && { usage: null }),
      ...extra,
    });
  const choice = (delta: Obj, finish: string | null = null) => ({
    index: 0,
    delta,
    logprobs: null,
    finish_reason: finish,
  });
  return [
    ...deltas.map((delta) => chunk([choice(delta)])),
    chunk([choice({}, finishReasons[result.finish])]),
    ...(includeUsage ? [chunk([], { usage: usage(result, 1, meta.rejectedPrediction) })] : []),
    sse('[DONE]'),
  ];
}

function usage(result: Answer, choices = 1, rejectedPrediction = 0): Obj {
  const completionTokens = (result.completionTokens + result.reasoningTokens + rejectedPrediction) * choices;
  return {
    prompt_tokens: result.promptTokens,
    completion_tokens: completionTokens,
    total_tokens: result.promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: result.cachedTokens, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: result.reasoningTokens,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: rejectedPrediction * choices,
    },
  };
}

function conversation(messages: unknown[]): Conversation {
  const messageTexts: string[] = [];
  let systemText: string | undefined;
  let lastUserText = '';
  for (const message of messages) {
    if (!isObj(message)) continue;
    const text = contentText(message.content);
    messageTexts.push(text);
    if ((message.role === 'system' || message.role === 'developer') && systemText === undefined)
      systemText = text;
    if (message.role === 'user') lastUserText = text;
  }
  const last = messages.at(-1);
  return { messageTexts, systemText, lastUserText, endsWithUserText: isObj(last) && last.role === 'user' };
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  return list(content)
    .flatMap((part) =>
      isObj(part) && part.type === 'text' && typeof part.text === 'string' ? [part.text] : [],
    )
    .join('\n');
}

function limitOf(body: Obj): number | undefined {
  const limit = body.max_completion_tokens ?? body.max_tokens;
  return typeof limit === 'number' ? limit : undefined;
}

function firstToolName(tools: unknown): string | undefined {
  const tool = list(tools).find((t) => isObj(t) && t.type === 'function' && isObj(t.function));
  return isObj(tool) && isObj(tool.function) ? str(tool.function.name) : undefined;
}

function headers(seq: number, rateLimit = rateLimitHeaders(9_999, 29_999_000)): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-request-id': `req_sim${seq}`,
    'openai-version': '2020-10-01',
    'openai-processing-ms': '1',
    ...rateLimit,
  };
}

function rateLimitHeaders(
  remainingRequests: number,
  remainingTokens: number,
  reset = '6ms',
): Record<string, string> {
  return {
    'x-ratelimit-limit-requests': '10000',
    'x-ratelimit-remaining-requests': String(remainingRequests),
    'x-ratelimit-reset-requests': reset,
    'x-ratelimit-limit-tokens': '30000000',
    'x-ratelimit-remaining-tokens': String(remainingTokens),
    'x-ratelimit-reset-tokens': reset,
  };
}

interface ErrorFields {
  message: string;
  type?: string;
  param?: string | null;
  code?: string | null;
}

function error(status: number, seq: number, fields: ErrorFields, extra: Record<string, string> = {}): Reply {
  const { message, type = 'invalid_request_error', param = null, code = null } = fields;
  return { status, headers: { ...headers(seq), ...extra }, body: { error: { message, type, param, code } } };
}

const defaultErrors: Record<number, ErrorFields> = {
  400: { message: 'Invalid request.' },
  401: {
    message:
      "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
    code: 'invalid_api_key',
  },
  403: {
    message: 'Country, region, or territory not supported',
    type: 'request_forbidden',
    code: 'unsupported_country_region_territory',
  },
  404: { message: 'The model does not exist or you do not have access to it.', code: 'model_not_found' },
  429: { message: 'Rate limit reached for requests.', type: 'requests', code: 'rate_limit_exceeded' },
  500: {
    message: 'The server had an error while processing your request. Sorry about that!',
    type: 'server_error',
  },
  503: { message: 'The engine is currently overloaded, please try again later', type: 'server_error' },
};

function errorReply(status: number, seq: number): Reply {
  const fallback: ErrorFields =
    status >= 500 ? { message: 'Upstream error.', type: 'server_error' } : { message: 'Request failed.' };
  return error(status, seq, defaultErrors[status] ?? fallback);
}

function rateLimited(retryAfterSeconds: number, seq: number): Reply {
  const fields = {
    message: `Rate limit reached for requests per min (RPM): Limit 10000, Used 10000, Requested 1. Please try again in ${retryAfterSeconds}s. Visit https://platform.openai.com/account/rate-limits to learn more.`,
    type: 'requests',
    code: 'rate_limit_exceeded',
  };
  return error(429, seq, fields, {
    ...rateLimitHeaders(0, 29_999_000, `${retryAfterSeconds}s`),
    'retry-after': String(retryAfterSeconds),
  });
}

/** The chat simulator as a provider, for simulators that add endpoints around it (the batch APIs). */
export const openAiProvider: Provider = {
  handle,
  errorReply,
  rateLimited,
  listModels: listOpenAiModels,
  family: 'openai',
};
