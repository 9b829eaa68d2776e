import { type Incoming, type Provider, type Reply, sse, startUpstream } from './harness.ts';
import {
  type Answer,
  answer,
  type Conversation,
  isObj,
  list,
  type Obj,
  pieces,
  reasoningModel,
  str,
} from './model.ts';
import type { ModelListState } from './model-list.ts';
import type { Upstream } from './types.ts';

/**
 * The Gemini API (generativelanguage). The gateway's base URL is `url` itself (GOOGLE_BASE_URL has no version path).
 * As Gemini does: a thinking model reports thoughtsTokenCount, but thought parts are only sent when
 * `thinkingConfig.includeThoughts` is true; a 429 carries its delay in a RetryInfo detail, not a Retry-After header;
 * SSE events end in CRLF; in a stream only the last chunk's usageMetadata is complete.
 */
export function startGeminiUpstream(): Promise<Upstream> {
  return startUpstream(geminiProvider);
}

/** What each kind of model answers to, as `models.list` reports it. */
const methodsOf = (id: string) =>
  /embed/.test(id)
    ? ['embedContent', 'batchEmbedContents', 'asyncBatchEmbedContent']
    : /^veo-/.test(id)
      ? ['predictLongRunning']
      : /^imagen-/.test(id)
        ? ['predict']
        : ['generateContent', 'countTokens', 'createCachedContent', 'batchGenerateContent'];

/**
 * `models.list` as Google documents it: `GET /v1beta/models`, the key as `x-goog-api-key` or `?key=`, `pageSize`
 * (default 50, at most 1000) and `pageToken`, answering `{models: [{name: "models/...", baseModelId, version,
 * displayName, inputTokenLimit, outputTokenLimit, supportedGenerationMethods, ...}], nextPageToken}`.
 */
function listModels(request: Incoming, models: ModelListState): Reply | undefined {
  if (request.method !== 'GET' || !/^\/(v1beta|v1)\/models$/.test(request.path)) return undefined;
  return models.answer(
    () => {
      const key = request.headers['x-goog-api-key'] ?? request.query.key;
      if (!key)
        return error(
          403,
          "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
        );
      const asked = request.query.pageSize === undefined ? undefined : Number(request.query.pageSize);
      const size = models.page(asked && asked > 0 ? asked : undefined, 50, 1000);
      const token = request.query.pageToken;
      const start = token ? Number(Buffer.from(token, 'base64url').toString()) : 0;
      if (!Number.isInteger(start) || start < 0) return error(400, 'Invalid page token.');
      const ids = models.ids();
      const page = ids.slice(start, start + size).map((id) => ({
        name: `models/${id}`,
        baseModelId: id,
        version: '001',
        displayName: id,
        description: `The simulator's ${id}.`,
        inputTokenLimit: 1_048_576,
        outputTokenLimit: 65_536,
        supportedGenerationMethods: methodsOf(id),
      }));
      const next =
        start + size < ids.length ? Buffer.from(String(start + size)).toString('base64url') : undefined;
      return {
        status: 200,
        headers: headers(),
        body: { ...(page.length > 0 && { models: page }), ...(next && { nextPageToken: next }) },
      };
    },
    (status) => errorReply(status),
  );
}

const route = /^\/(v1beta|v1)\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/;

function handle(request: Incoming): Reply {
  const { seq } = request;
  const match = request.method === 'POST' ? route.exec(request.path) : null;
  if (!match) return error(404, `Requested entity was not found. (${request.method} ${request.path})`);
  const key = request.headers['x-goog-api-key'] ?? request.query.key;
  if (key === undefined) {
    return error(
      403,
      "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
    );
  }
  if (key === '') {
    return error(400, 'API key not valid. Please pass a valid API key.', [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: 'API_KEY_INVALID',
        domain: 'googleapis.com',
        metadata: { service: 'generativelanguage.googleapis.com' },
      },
    ]);
  }
  const body = request.body;
  if (request.invalidJson || !isObj(body)) return error(400, 'Invalid JSON payload received.');
  if (list(body.contents).length === 0) {
    return error(400, '* GenerateContentRequest.contents: contents is not specified\n');
  }
  const model = decodeURIComponent(match[2] ?? '');
  const method = match[3];
  const config = isObj(body.generationConfig) ? body.generationConfig : {};
  const thinking = isObj(config.thinkingConfig) ? config.thinkingConfig : {};
  const budget = thinking.thinkingBudget;
  const result = answer({
    conversation: conversation(body.systemInstruction, list(body.contents)),
    limit: typeof config.maxOutputTokens === 'number' ? config.maxOutputTokens : undefined,
    json: config.responseMimeType === 'application/json',
    toolName: toolsOff(body.toolConfig) ? undefined : firstToolName(body.tools),
    reasoning:
      budget !== 0 &&
      (reasoningModel(model) ||
        thinking.includeThoughts === true ||
        (typeof budget === 'number' && budget !== 0) ||
        thinking.thinkingLevel !== undefined),
  });
  if (method === 'countTokens') {
    const details = [{ modality: 'TEXT', tokenCount: result.promptTokens }];
    return {
      status: 200,
      headers: headers(),
      body: { totalTokens: result.promptTokens, promptTokensDetails: details },
    };
  }

  const meta = { modelVersion: model, responseId: `sim${seq}` };
  const showThoughts = thinking.includeThoughts === true;
  if (method === 'streamGenerateContent') {
    const chunks = streamChunks(result, meta, showThoughts);
    if (request.query.alt === 'sse') {
      return {
        status: 200,
        headers: { ...headers(), 'content-type': 'text/event-stream' },
        chunks: chunks.map((chunk) => sse(chunk, undefined, '\r\n')),
      };
    }
    // Without alt=sse Google streams one JSON array, element by element.
    const last = chunks.length - 1;
    return {
      status: 200,
      headers: headers(),
      chunks: chunks.map(
        (chunk, i) => `${i === 0 ? '[' : ',\r\n'}${JSON.stringify(chunk)}${i === last ? ']' : ''}`,
      ),
    };
  }
  const candidate = {
    content: { role: 'model', parts: parts(result, showThoughts) },
    finishReason: finish(result),
    index: 0,
  };
  return {
    status: 200,
    headers: headers(),
    body: { candidates: [candidate], usageMetadata: usage(result), ...meta },
  };
}

function finish(result: Answer): string {
  return result.finish === 'length' ? 'MAX_TOKENS' : 'STOP';
}

function parts(result: Answer, showThoughts: boolean): Obj[] {
  const out: Obj[] = [];
  if (result.reasoning !== undefined && showThoughts) out.push({ text: result.reasoning, thought: true });
  if (result.toolCall) {
    const { name, args } = result.toolCall;
    // Thinking models sign their function calls; the caller must send the signature back with the turn.
    const signature =
      result.reasoning === undefined
        ? {}
        : { thoughtSignature: Buffer.from(`sim:${name}`).toString('base64') };
    out.push({ functionCall: { name, args }, ...signature });
  }
  if (result.text !== undefined) out.push({ text: result.text });
  return out;
}

/** One chunk per thought/text piece (a function call whole, as Gemini sends it); the last has finishReason and full usage. */
function streamChunks(result: Answer, meta: Obj, showThoughts: boolean): Obj[] {
  const streamed: Obj[] = [];
  for (const part of parts(result, showThoughts)) {
    if (typeof part.text !== 'string') streamed.push(part);
    else for (const text of pieces(part.text)) streamed.push({ ...part, text });
  }
  if (streamed.length === 0) streamed.push({ text: '' });
  const partial = {
    promptTokenCount: result.promptTokens,
    totalTokenCount: result.promptTokens,
    ...(result.cachedTokens > 0 && { cachedContentTokenCount: result.cachedTokens }),
  };
  const last = streamed.length - 1;
  return streamed.map((part, i) => ({
    candidates: [
      {
        content: { role: 'model', parts: [part] },
        ...(i === last && { finishReason: finish(result) }),
        index: 0,
      },
    ],
    usageMetadata: i === last ? usage(result) : partial,
    ...meta,
  }));
}

/** candidatesTokenCount excludes thoughts; totalTokenCount includes them; cached tokens are part of the prompt. */
function usage(result: Answer): Obj {
  return {
    promptTokenCount: result.promptTokens,
    candidatesTokenCount: result.completionTokens,
    totalTokenCount: result.promptTokens + result.completionTokens + result.reasoningTokens,
    ...(result.cachedTokens > 0 && { cachedContentTokenCount: result.cachedTokens }),
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: result.promptTokens }],
    ...(result.reasoningTokens > 0 && { thoughtsTokenCount: result.reasoningTokens }),
  };
}

function conversation(systemInstruction: unknown, contents: unknown[]): Conversation {
  const systemText = isObj(systemInstruction) ? partsText(systemInstruction.parts, false) : undefined;
  const messageTexts = systemText === undefined ? [] : [systemText];
  let lastUserText = '';
  for (const content of contents) {
    if (!isObj(content)) continue;
    messageTexts.push(partsText(content.parts, true));
    const own = partsText(content.parts, false);
    if (content.role !== 'model' && own !== '') lastUserText = own;
  }
  const last = contents.at(-1);
  const endsWithUserText =
    isObj(last) &&
    last.role !== 'model' &&
    !list(last.parts).some((part) => isObj(part) && part.functionResponse);
  return { messageTexts, systemText, lastUserText, endsWithUserText };
}

/** Text parts joined by newlines (thoughts skipped); with toolResults, each functionResponse's response as JSON. */
function partsText(value: unknown, toolResults: boolean): string {
  return list(value)
    .flatMap((part): string[] => {
      if (!isObj(part) || part.thought === true) return [];
      if (typeof part.text === 'string') return [part.text];
      if (toolResults && isObj(part.functionResponse))
        return [JSON.stringify(part.functionResponse.response ?? {})];
      return [];
    })
    .join('\n');
}

function toolsOff(toolConfig: unknown): boolean {
  return (
    isObj(toolConfig) &&
    isObj(toolConfig.functionCallingConfig) &&
    toolConfig.functionCallingConfig.mode === 'NONE'
  );
}

function firstToolName(tools: unknown): string | undefined {
  for (const tool of list(tools)) {
    const declaration = isObj(tool) ? list(tool.functionDeclarations)[0] : undefined;
    if (isObj(declaration)) return str(declaration.name);
  }
  return undefined;
}

function headers(): Record<string, string> {
  return { 'content-type': 'application/json; charset=UTF-8', 'x-content-type-options': 'nosniff' };
}

const statuses: Record<number, [string, string]> = {
  400: ['INVALID_ARGUMENT', 'Request contains an invalid argument.'],
  401: ['UNAUTHENTICATED', 'Request had invalid authentication credentials.'],
  403: ['PERMISSION_DENIED', 'The caller does not have permission'],
  404: ['NOT_FOUND', 'Requested entity was not found.'],
  429: ['RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. check quota).'],
  499: ['CANCELLED', 'The operation was cancelled.'],
  500: [
    'INTERNAL',
    'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
  ],
  503: ['UNAVAILABLE', 'The model is overloaded. Please try again later.'],
  504: ['DEADLINE_EXCEEDED', 'Deadline expired before operation could complete.'],
};

function error(code: number, message?: string, details?: Obj[]): Reply {
  const [status, fallback] =
    statuses[code] ?? (code >= 500 ? ['INTERNAL', 'Internal error.'] : ['UNKNOWN', 'Error.']);
  return {
    status: code,
    headers: headers(),
    body: { error: { code, message: message ?? fallback, status, ...(details && { details }) } },
  };
}

function errorReply(status: number): Reply {
  return error(status);
}

function rateLimited(retryAfterSeconds: number): Reply {
  return error(
    429,
    'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.',
    [
      {
        '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
        violations: [
          {
            quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests',
            quotaId: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier',
          },
        ],
      },
      {
        '@type': 'type.googleapis.com/google.rpc.Help',
        links: [
          {
            description: 'Learn more about Gemini API quotas',
            url: 'https://ai.google.dev/gemini-api/docs/rate-limits',
          },
        ],
      },
      { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${retryAfterSeconds}s` },
    ],
  );
}

/** The chat simulator as a provider, for simulators that add endpoints around it (the batch APIs). */
export const geminiProvider: Provider = {
  handle,
  errorReply,
  rateLimited,
  listModels,
  family: 'gemini',
};
