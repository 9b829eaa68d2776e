import { type Incoming, type Reply, sse } from './harness.ts';
import { answer, isObj, type Obj, pieces, str } from './model.ts';

/**
 * OpenAI's legacy completions (`POST /v1/completions`), served by the instruct-era models only (as OpenAI does:
 * a chat model answers 404 there). The prompt is one user message to the shared model: the reply is
 * `echo: <prompt>`, prompt tokens its words + 3.
 */
export function legacyCompletion(request: Incoming, headers: Record<string, string>): Reply {
  const body = isObj(request.body) ? request.body : {};
  const model = str(body.model) ?? '';
  if (!/^(gpt-3\.5-turbo-instruct|davinci-002|babbage-002)/.test(model)) {
    const message =
      'This is a chat model and not supported in the v1/completions endpoint. Did you mean to use v1/chat/completions?';
    return {
      status: 404,
      headers,
      body: { error: { message, type: 'invalid_request_error', param: 'model', code: null } },
    };
  }
  const prompt =
    typeof body.prompt === 'string' ? body.prompt : Array.isArray(body.prompt) ? String(body.prompt[0]) : '';
  const result = answer({
    conversation: {
      messageTexts: [prompt],
      systemText: undefined,
      lastUserText: prompt,
      endsWithUserText: true,
    },
    limit: typeof body.max_tokens === 'number' ? body.max_tokens : 16,
    json: false,
    schema: undefined,
    toolName: undefined,
    reasoning: false,
    reply: request.behaviour?.reply,
  });
  const meta = {
    id: `cmpl-sim${request.seq}`,
    object: 'text_completion',
    created: Math.floor(Date.now() / 1000),
    model,
  };
  const usage: Obj = {
    prompt_tokens: result.promptTokens,
    completion_tokens: result.completionTokens,
    total_tokens: result.promptTokens + result.completionTokens,
  };
  const finish = result.finish === 'length' ? 'length' : 'stop';
  if (body.stream !== true) {
    const choices = [{ text: result.text ?? '', index: 0, logprobs: null, finish_reason: finish }];
    return { status: 200, headers, body: { ...meta, choices, usage } };
  }
  const includeUsage = isObj(body.stream_options) && body.stream_options.include_usage === true;
  const chunk = (text: string, finishReason: string | null) =>
    sse({
      ...meta,
      choices: [{ text, index: 0, logprobs: null, finish_reason: finishReason }],
      ...(includeUsage && { usage: null }),
    });
  const texts = pieces(result.text ?? '');
  return {
    status: 200,
    headers: { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' },
    chunks: [
      ...texts.map((text, i) => chunk(text, i === texts.length - 1 ? finish : null)),
      ...(includeUsage ? [sse({ ...meta, choices: [], usage })] : []),
      sse('[DONE]'),
    ],
  };
}
