import { type Incoming, type Provider, type Reply, sse, startUpstream } from './harness.ts';
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
import type { Upstream } from './types.ts';

/**
 * Anthropic's Messages API. The gateway's base URL is `url` itself (ANTHROPIC_BASE_URL has no version path).
 * Thinking blocks appear for reasoning model ids and when the request enables `thinking`.
 */
export function startAnthropicUpstream(): Promise<Upstream> {
  return startUpstream(anthropicProvider);
}

/**
 * `GET /v1/models` as Anthropic documents it: most recent first, `limit` 1 to 1000 (default 20), `after_id` /
 * `before_id` cursors, answering `{data: [{type: "model", id, display_name, created_at}], has_more, first_id,
 * last_id}`; a key (`x-api-key`, or a Bearer token) and `anthropic-version` required.
 */
function listModels(request: Incoming, models: ModelListState): Reply | undefined {
  if (request.method !== 'GET' || request.path !== '/v1/models') return undefined;
  const { seq, query } = request;
  return models.answer(
    () => {
      // Anthropic's newer SDKs send the key as a Bearer token.
      if (!request.headers['x-api-key'] && !/^Bearer\s+\S+/i.test(request.headers.authorization ?? '')) {
        return error(401, seq, 'authentication_error', 'x-api-key header is required');
      }
      if (!request.headers['anthropic-version']) {
        return error(400, seq, 'invalid_request_error', 'anthropic-version: header is required');
      }
      const asked = query.limit === undefined ? undefined : Number(query.limit);
      if (asked !== undefined && !(Number.isInteger(asked) && asked >= 1 && asked <= 1000)) {
        return error(400, seq, 'invalid_request_error', 'limit: Input should be less than or equal to 1000');
      }
      const ids = [...models.ids()];
      const size = models.page(asked, 20, 1000);
      const cursor = query.after_id ?? query.before_id;
      const at = cursor === undefined ? -1 : ids.indexOf(cursor);
      if (cursor !== undefined && at < 0) {
        return error(400, seq, 'invalid_request_error', `Invalid cursor: ${cursor}`);
      }
      const start = query.before_id !== undefined ? Math.max(0, at - size) : at + 1;
      const end = query.before_id !== undefined ? at : Math.min(ids.length, start + size);
      const page = ids.slice(start, end);
      const data = page.map((id, i) => ({
        type: 'model',
        id,
        display_name: id,
        created_at: new Date(Date.UTC(2025, 0, 1) - (start + i) * 86_400_000).toISOString(),
      }));
      const hasMore = query.before_id !== undefined ? start > 0 : end < ids.length;
      return {
        status: 200,
        headers: headers(seq),
        body: { data, has_more: hasMore, first_id: page[0] ?? null, last_id: page.at(-1) ?? null },
      };
    },
    (status) => errorReply(status, seq),
  );
}

function handle(request: Incoming): Reply {
  const { method, path, seq } = request;
  const countTokens = path === '/v1/messages/count_tokens';
  if (method !== 'POST' || (path !== '/v1/messages' && !countTokens))
    return error(404, seq, 'not_found_error', 'Not Found');
  if (!request.headers['x-api-key']) {
    return error(401, seq, 'authentication_error', 'x-api-key header is required');
  }
  if (!request.headers['anthropic-version']) {
    return error(400, seq, 'invalid_request_error', 'anthropic-version: header is required');
  }
  const body = request.body;
  if (request.invalidJson || !isObj(body))
    return error(400, seq, 'invalid_request_error', 'Invalid JSON in request body');
  const missing = ['model', 'messages', ...(countTokens ? [] : ['max_tokens'])].find(
    (field) => body[field] === undefined,
  );
  if (missing) return error(400, seq, 'invalid_request_error', `${missing}: Field required`);
  if (typeof body.model !== 'string' || !Array.isArray(body.messages)) {
    return error(400, seq, 'invalid_request_error', 'messages: Input should be a valid list');
  }

  const thinking = isObj(body.thinking) ? body.thinking.type : undefined;
  const result = answer({
    conversation: conversation(body.system, body.messages),
    limit: typeof body.max_tokens === 'number' ? body.max_tokens : undefined,
    json: jsonFormat(body),
    toolName:
      isObj(body.tool_choice) && body.tool_choice.type === 'none' ? undefined : firstToolName(body.tools),
    reasoning: reasoningModel(body.model) || thinking === 'enabled' || thinking === 'adaptive',
  });
  if (countTokens) return { status: 200, headers: headers(seq), body: { input_tokens: result.promptTokens } };
  const written = cacheWrites(body, result);

  const message = { id: `msg_sim${seq}`, type: 'message', role: 'assistant', model: body.model };
  if (body.stream === true) {
    return {
      status: 200,
      headers: {
        ...headers(seq),
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
      },
      chunks: streamEvents(result, written, message, seq),
    };
  }
  const content = blocks(result, seq).map((block) => block.full);
  return {
    status: 200,
    headers: headers(seq),
    body: {
      ...message,
      content,
      stop_reason: stopReasons[result.finish],
      stop_sequence: null,
      usage: usage(result, written),
    },
  };
}

const stopReasons = { stop: 'end_turn', length: 'max_tokens', tool: 'tool_use' } as const;

interface Block {
  full: Obj;
  start: Obj;
  deltas: Obj[];
}

function blocks(result: Answer, seq: number): Block[] {
  const out: Block[] = [];
  if (result.reasoning !== undefined) {
    const signature = Buffer.from(`sim-signature:${result.reasoning}`).toString('base64');
    out.push({
      full: { type: 'thinking', thinking: result.reasoning, signature },
      start: { type: 'thinking', thinking: '', signature: '' },
      deltas: [
        ...pieces(result.reasoning).map((thinking) => ({ type: 'thinking_delta', thinking })),
        { type: 'signature_delta', signature },
      ],
    });
  }
  if (result.toolCall) {
    const tool = { type: 'tool_use', id: `toolu_sim${seq}`, name: result.toolCall.name };
    out.push({
      full: { ...tool, input: result.toolCall.args },
      start: { ...tool, input: {} },
      // Anthropic opens a tool's input with an empty fragment before the real ones.
      deltas: ['', ...fragments(result.toolCall.argsJson)].map((partial_json) => ({
        type: 'input_json_delta',
        partial_json,
      })),
    });
  }
  if (result.text !== undefined) {
    out.push({
      full: { type: 'text', text: result.text },
      start: { type: 'text', text: '' },
      deltas: pieces(result.text).map((text) => ({ type: 'text_delta', text })),
    });
  }
  return out;
}

/** The documented order: message_start, then per block start/deltas/stop (a ping after the first start), message_delta, message_stop. */
function streamEvents(result: Answer, written: number, message: Obj, seq: number): string[] {
  const event = (type: string, data: Obj = {}) => sse({ type, ...data }, type);
  const start = {
    ...message,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    // Anthropic reports a token or so of output up front; message_delta carries the cumulative total.
    usage: { ...usage(result, written), output_tokens: 1 },
  };
  const out = [event('message_start', { message: start })];
  for (const [index, block] of blocks(result, seq).entries()) {
    out.push(event('content_block_start', { index, content_block: block.start }));
    if (index === 0) out.push(event('ping'));
    for (const delta of block.deltas) out.push(event('content_block_delta', { index, delta }));
    out.push(event('content_block_stop', { index }));
  }
  const { service_tier: _tier, ...cumulative } = usage(result, written);
  out.push(
    event('message_delta', {
      delta: { stop_reason: stopReasons[result.finish], stop_sequence: null },
      usage: cumulative,
    }),
    event('message_stop'),
  );
  return out;
}

/** input_tokens excludes cache reads and writes, which Anthropic reports beside it. */
function usage(result: Answer, written: number): Obj {
  return {
    input_tokens: result.promptTokens - result.cachedTokens - written,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: result.cachedTokens,
    output_tokens: result.completionTokens + result.reasoningTokens,
    service_tier: 'standard',
  };
}

const hasBreakpoint = (block: unknown) => isObj(block) && isObj(block.cache_control);

/**
 * Cache-write tokens, as Anthropic bills them: the prompt up to and including the last block that carries a
 * `cache_control` breakpoint (the whole prompt for one on the request itself, automatic caching), less what was
 * read from the cache. By the token rule of model.ts: the system prompt and each message up to that one, at
 * words + 3; tools count no tokens here, so a breakpoint on a tool writes nothing. The simulator caches nothing
 * between requests and has no minimum cacheable length: every breakpoint writes.
 */
function cacheWrites(body: Obj, result: Answer): number {
  const system = body.system === undefined ? [] : [body.system];
  const turns = [...system, ...list(body.messages).map((m) => (isObj(m) ? m.content : undefined))];
  const marked = (content: unknown) =>
    list(content).some(
      (block) => hasBreakpoint(block) || (isObj(block) && list(block.content).some(hasBreakpoint)),
    );
  const last = isObj(body.cache_control) ? turns.length - 1 : turns.findLastIndex(marked);
  if (last < 0) return 0;
  const texts = conversation(body.system, list(body.messages)).messageTexts.slice(0, last + 1);
  const prefix = texts.reduce((sum, text) => sum + words(text) + 3, 0);
  return Math.max(0, prefix - result.cachedTokens);
}

function conversation(system: unknown, messages: unknown[]): Conversation {
  const systemText = system === undefined ? undefined : blockText(system, false);
  const messageTexts = systemText === undefined ? [] : [systemText];
  let lastUserText = '';
  for (const message of messages) {
    if (!isObj(message)) continue;
    messageTexts.push(blockText(message.content, true));
    const own = blockText(message.content, false);
    if (message.role === 'user' && own !== '') lastUserText = own;
  }
  const last = messages.at(-1);
  const endsWithUserText =
    isObj(last) &&
    last.role === 'user' &&
    !list(last.content).some((block) => isObj(block) && block.type === 'tool_result');
  return { messageTexts, systemText, lastUserText, endsWithUserText };
}

/** Text blocks joined by newlines; with toolResults, the text inside tool_result blocks too. */
function blockText(content: unknown, toolResults: boolean): string {
  if (typeof content === 'string') return content;
  return list(content)
    .flatMap((block): string[] => {
      if (!isObj(block)) return [];
      if (block.type === 'text') return [str(block.text) ?? ''];
      if (block.type === 'tool_result' && toolResults) return [blockText(block.content, false)];
      return [];
    })
    .join('\n');
}

function jsonFormat(body: Obj): boolean {
  // Structured outputs: `output_format` in the beta, `output_config.format` since.
  const format = isObj(body.output_config) ? body.output_config.format : body.output_format;
  return isObj(format) && format.type === 'json_schema';
}

function firstToolName(tools: unknown): string | undefined {
  const tool = list(tools).find((t) => isObj(t) && typeof t.name === 'string');
  return isObj(tool) ? str(tool.name) : undefined;
}

function headers(seq: number): Record<string, string> {
  return {
    'content-type': 'application/json',
    'request-id': `req_sim${seq}`,
    'anthropic-organization-id': '00000000-0000-4000-8000-000000000000',
  };
}

function error(
  status: number,
  seq: number,
  type: string,
  message: string,
  extra: Record<string, string> = {},
): Reply {
  return {
    status,
    headers: { ...headers(seq), ...extra },
    body: { type: 'error', error: { type, message }, request_id: `req_sim${seq}` },
  };
}

const defaultErrors: Record<number, [string, string]> = {
  400: ['invalid_request_error', 'Invalid request.'],
  401: ['authentication_error', 'invalid x-api-key'],
  402: ['billing_error', 'Your credit balance is too low to access the Anthropic API.'],
  403: ['permission_error', 'Your API key does not have permission to use the specified resource.'],
  404: ['not_found_error', 'The requested resource could not be found.'],
  413: ['request_too_large', 'Request exceeds the maximum allowed number of bytes.'],
  429: ['rate_limit_error', 'Number of requests has exceeded your rate limit.'],
  500: ['api_error', 'Internal server error'],
  504: ['timeout_error', 'Request timed out.'],
  529: ['overloaded_error', 'Overloaded'],
};

function errorReply(status: number, seq: number): Reply {
  const [type, message] =
    defaultErrors[status] ??
    (status >= 500 ? ['api_error', 'Internal server error'] : ['invalid_request_error', 'Invalid request.']);
  return error(status, seq, type, message);
}

function rateLimited(retryAfterSeconds: number, seq: number): Reply {
  const reset = new Date(Date.now() + retryAfterSeconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
  return error(
    429,
    seq,
    'rate_limit_error',
    'This request would exceed the rate limit for your organization of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits.',
    {
      'retry-after': String(retryAfterSeconds),
      'anthropic-ratelimit-requests-limit': '50',
      'anthropic-ratelimit-requests-remaining': '0',
      'anthropic-ratelimit-requests-reset': reset,
    },
  );
}

/** The chat simulator as a provider, for simulators that add endpoints around it (the batch APIs). */
export const anthropicProvider: Provider = {
  handle,
  errorReply,
  rateLimited,
  listModels,
  family: 'anthropic',
};
