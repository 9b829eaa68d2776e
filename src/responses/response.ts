import type { ReportedUsage } from '../contracts/chat.ts';
import type { ResponsesRequest } from './schema.ts';

/** One answer of the chat path, whichever form it came in: a completion's message or a stream put together. */
export interface Turn {
  reasoning: string;
  text: string;
  refusal: string;
  toolCalls: { id: string; name: string; arguments: string }[];
  /** The chat-completions finish reason. */
  finish: string | null;
}

export type OutputItem = Record<string, unknown> & { type: string; id: string };

export interface ResponseUsage {
  input_tokens: number;
  /** Both parts of input_tokens: read from, and written to, the provider's prompt cache. */
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (isObj(part) && part.type === 'text' ? str(part.text) : '')).join('');
}

function toolCalls(calls: unknown): Turn['toolCalls'] {
  if (!Array.isArray(calls)) return [];
  return calls.filter(isObj).map((call) => {
    const fn = isObj(call.function) ? call.function : {};
    return { id: str(call.id), name: str(fn.name), arguments: str(fn.arguments) };
  });
}

/**
 * The first choice of a chat completion (`choices[].message`) or of the request log's assembled stream
 * (`choices[].text`, `tool_calls`), as a turn. The log holds a completion as `{completion, usage}`.
 */
export function turnOf(answer: unknown): Turn {
  const completion = isObj(answer) && isObj(answer.completion) ? answer.completion : answer;
  const choices = isObj(completion) && Array.isArray(completion.choices) ? completion.choices : [];
  const choice: Obj = isObj(choices[0]) ? choices[0] : {};
  const message: Obj = isObj(choice.message) ? choice.message : choice;
  const finish = typeof choice.finish_reason === 'string' ? choice.finish_reason : null;
  return {
    reasoning: str(message.reasoning_content ?? message.reasoning),
    text: 'message' in choice ? contentText(message.content) : str(choice.text),
    refusal: str(message.refusal),
    toolCalls: toolCalls(message.tool_calls),
    finish,
  };
}

/** The ids of a response's items derive from its own, so a response read back has the ids it was served with. */
export const outputId = (responseId: string, prefix: string, index: number) =>
  `${prefix}_${responseId.replace(/^resp_/, '')}_${index}`;

/** Where the output was cut, if it was: the output limit, or the provider's content filter. */
export function incompleteReason(finish: string | null): 'max_output_tokens' | 'content_filter' | undefined {
  if (finish === 'length') return 'max_output_tokens';
  if (finish === 'content_filter') return 'content_filter';
  return undefined;
}

export const textPart = (text: string) => ({ type: 'output_text', text, annotations: [], logprobs: [] });

/** The output items of a turn, in the order a stream produces them: reasoning, the message, the calls. */
export function outputItems(turn: Turn, responseId: string): OutputItem[] {
  const status = incompleteReason(turn.finish) ? 'incomplete' : 'completed';
  const items: OutputItem[] = [];
  if (turn.reasoning !== '') {
    items.push({
      id: outputId(responseId, 'rs', items.length),
      type: 'reasoning',
      summary: [],
      content: [{ type: 'reasoning_text', text: turn.reasoning }],
    });
  }
  // An answer with nothing in it is still a message, as OpenAI answers one: an empty text.
  if (turn.text !== '' || turn.refusal !== '' || turn.toolCalls.length === 0) {
    const content = [
      ...(turn.text === '' && turn.refusal !== '' ? [] : [textPart(turn.text)]),
      ...(turn.refusal === '' ? [] : [{ type: 'refusal', refusal: turn.refusal }]),
    ];
    items.push({
      id: outputId(responseId, 'msg', items.length),
      type: 'message',
      role: 'assistant',
      status,
      content,
    });
  }
  for (const call of turn.toolCalls) {
    const id = outputId(responseId, 'fc', items.length);
    items.push({
      id,
      type: 'function_call',
      call_id: call.id === '' ? `call_${id.slice(3)}` : call.id,
      name: call.name,
      arguments: call.arguments,
      status: 'completed',
    });
  }
  return items;
}

export function responseUsage(usage: ReportedUsage): ResponseUsage {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: {
      cached_tokens: usage.cachedPromptTokens,
      cache_write_tokens: usage.cacheWriteTokens,
    },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

export interface ResponseMeta {
  id: string;
  /** Unix seconds. */
  createdAt: number;
  model: string;
  status: 'in_progress' | 'completed' | 'incomplete' | 'failed';
  output: OutputItem[];
  usage: ResponseUsage | null;
  incomplete?: 'max_output_tokens' | 'content_filter' | undefined;
  error?: { code: string; message: string } | undefined;
}

function toolsEcho(tools: ResponsesRequest['tools']): unknown[] {
  return (tools ?? []).map((tool) => ({
    type: tool.type,
    name: tool.name,
    description: tool.description ?? null,
    parameters: tool.parameters ?? null,
    strict: tool.strict ?? null,
  }));
}

/** The Response object: the request's settings echoed as OpenAI echoes them, with the output and usage. */
export function responseObject(body: ResponsesRequest, meta: ResponseMeta): Obj {
  return {
    id: meta.id,
    object: 'response',
    created_at: meta.createdAt,
    status: meta.status,
    ...(meta.status === 'completed' || meta.status === 'incomplete'
      ? { completed_at: meta.createdAt }
      : { completed_at: null }),
    background: false,
    error: meta.error ?? null,
    incomplete_details: meta.incomplete ? { reason: meta.incomplete } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: meta.model,
    output: meta.output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
    service_tier: 'default',
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: { format: body.text?.format ?? { type: 'text' }, verbosity: body.text?.verbosity ?? 'medium' },
    tool_choice: body.tool_choice ?? 'auto',
    tools: toolsEcho(body.tools),
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? 'disabled',
    usage: meta.usage,
    user: body.user ?? null,
    metadata: body.metadata ?? {},
  };
}

/** A finished turn as its Response. */
export function finishedResponse(
  body: ResponsesRequest,
  turn: Turn,
  meta: { id: string; createdAt: number; model: string; usage: ReportedUsage | null },
): Obj {
  const incomplete = incompleteReason(turn.finish);
  return responseObject(body, {
    id: meta.id,
    createdAt: meta.createdAt,
    model: meta.model,
    status: incomplete ? 'incomplete' : 'completed',
    output: outputItems(turn, meta.id),
    usage: meta.usage && responseUsage(meta.usage),
    incomplete,
  });
}
