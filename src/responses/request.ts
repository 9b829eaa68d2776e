import type { ChatCompletionRequest } from '../chat/request.ts';
import { invalidField, RequestRefused } from '../contracts/errors.ts';
import type {
  FunctionCallItem,
  FunctionCallOutputItem,
  InputItem,
  MessageItem,
  Part,
  ResponsesRequest,
  TextFormat,
  ToolChoice,
} from './schema.ts';

type ChatMessage = ChatCompletionRequest['messages'][number];
type ChatPart = Record<string, unknown>;
type ReasoningEffort = NonNullable<ChatCompletionRequest['reasoning_effort']>;

/** The input as items: a string is one user message. */
export function inputItems(input: ResponsesRequest['input']): InputItem[] {
  if (input === undefined) return [];
  return typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : input;
}

const partText = (part: Part): string | undefined => {
  const p = part as { type: string; text?: unknown; refusal?: unknown };
  if ((p.type === 'input_text' || p.type === 'output_text') && typeof p.text === 'string') return p.text;
  if (p.type === 'refusal' && typeof p.refusal === 'string') return p.refusal;
  return undefined;
};

function imagePart(part: Part, field: string): ChatPart {
  const p = part as { image_url?: unknown; file_id?: unknown; detail?: unknown };
  if (typeof p.image_url !== 'string' || p.image_url === '') {
    throw invalidField(
      `${field}.image_url`,
      'give the image as a URL or a data: URL (file_id is not supported)',
    );
  }
  const detail = p.detail === 'original' ? 'high' : p.detail;
  return {
    type: 'image_url',
    image_url: { url: p.image_url, ...(typeof detail === 'string' && { detail }) },
  };
}

/** A part as chat content; parts a chat model cannot take (files, audio) are refused by name. */
function chatPart(part: Part, field: string): ChatPart {
  const text = partText(part);
  if (text !== undefined) return { type: 'text', text };
  if (part.type === 'input_image') return imagePart(part, field);
  throw invalidField(`${field}.type`, `'${part.type}' is not supported; use input_text or input_image`);
}

function textOnly(content: string | Part[], field: string): string {
  if (typeof content === 'string') return content;
  return content
    .map((part, j) => {
      const text = partText(part);
      if (text === undefined) throw invalidField(`${field}[${j}].type`, `'${part.type}' must be text here`);
      return text;
    })
    .join('');
}

function messageOf(item: MessageItem, field: string): ChatMessage {
  const role = item.role === 'developer' ? 'system' : item.role;
  if (role === 'user') {
    const content =
      typeof item.content === 'string'
        ? item.content
        : item.content.map((part, j) => chatPart(part, `${field}.content[${j}]`));
    return { role, content };
  }
  return { role, content: textOnly(item.content, `${field}.content`) };
}

/**
 * The items as chat messages. A function call joins the assistant message before it (the chat format carries
 * the calls of one turn in one message); a call's output is a tool message, its images in a user message after
 * it. Reasoning items are dropped: the chat format has no way to send them back upstream.
 */
export function toChatMessages(items: InputItem[], field = 'input'): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const [i, item] of items.entries()) {
    const at = `${field}[${i}]`;
    const type = item.type ?? 'message';
    if (type === 'message' && 'role' in item) out.push(messageOf(item as MessageItem, at));
    else if (type === 'function_call') addCall(out, item as FunctionCallItem);
    else if (type === 'function_call_output') out.push(...callOutput(item as FunctionCallOutputItem, at));
    else if (type === 'reasoning') continue;
    else
      throw invalidField(
        `${at}.type`,
        `'${type}' is not supported; use message, function_call or function_call_output`,
      );
  }
  return out;
}

function addCall(out: ChatMessage[], item: FunctionCallItem): void {
  const call = {
    id: item.call_id,
    type: 'function',
    function: { name: item.name, arguments: item.arguments },
  };
  const last = out.at(-1);
  if (last?.role === 'assistant') {
    last.tool_calls = [...(last.tool_calls ?? []), call];
    return;
  }
  out.push({ role: 'assistant', content: null, tool_calls: [call] });
}

function callOutput(item: FunctionCallOutputItem, field: string): ChatMessage[] {
  if (typeof item.output === 'string')
    return [{ role: 'tool', tool_call_id: item.call_id, content: item.output }];
  const text = item.output.flatMap((part) => {
    const t = partText(part);
    return t === undefined ? [] : [t];
  });
  const images = item.output.flatMap((part, j) =>
    part.type === 'input_image' ? [imagePart(part, `${field}.output[${j}]`)] : [],
  );
  const tool: ChatMessage = { role: 'tool', tool_call_id: item.call_id, content: text.join('') };
  return images.length > 0 ? [tool, { role: 'user', content: images }] : [tool];
}

function chatTools(tools: ResponsesRequest['tools']): unknown[] | undefined {
  if (!tools || tools.length === 0) return undefined;
  return tools.map((tool, i) => {
    if (tool.type !== 'function') {
      throw invalidField(
        `tools[${i}].type`,
        `'${tool.type}' is a built-in tool the gateway does not run; only function tools are supported`,
      );
    }
    if (!tool.name) throw invalidField(`tools[${i}].name`, 'a function tool needs a name');
    return {
      type: 'function',
      function: {
        name: tool.name,
        ...(typeof tool.description === 'string' && { description: tool.description }),
        parameters: tool.parameters ?? { type: 'object', properties: {} },
        ...(typeof tool.strict === 'boolean' && { strict: tool.strict }),
      },
    };
  });
}

function chatToolChoice(choice: ToolChoice): unknown {
  if (typeof choice === 'string') return choice;
  if (choice.type === 'function' && typeof choice.name === 'string') {
    return { type: 'function', function: { name: choice.name } };
  }
  throw invalidField(
    'tool_choice.type',
    `'${choice.type}' is not supported; use none, auto, required or a function`,
  );
}

function responseFormat(format: TextFormat | undefined): unknown {
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  return {
    type: 'json_schema',
    json_schema: {
      name: format.name,
      schema: format.schema,
      ...(format.description !== undefined && { description: format.description }),
      ...(typeof format.strict === 'boolean' && { strict: format.strict }),
    },
  };
}

/** `minimal` is below the chat format's lowest effort, which is the nearest. */
function effortOf(effort: string | null | undefined): ReasoningEffort | undefined {
  if (effort === null || effort === undefined) return undefined;
  return effort === 'minimal' ? 'low' : (effort as ReasoningEffort);
}

/** Fields the gateway cannot honour for a chat model, refused by name rather than silently ignored. */
function refuseUnsupported(body: ResponsesRequest): void {
  if (body.background) throw invalidField('background', 'background responses are not supported');
  if (body.conversation !== undefined && body.conversation !== null) {
    throw invalidField('conversation', 'conversations are not supported; use previous_response_id');
  }
  if (body.prompt !== undefined && body.prompt !== null) {
    throw invalidField('prompt', 'stored prompt templates are not supported');
  }
}

/**
 * A Responses request as a chat-completions request: the instructions as the system message, then the earlier
 * turns (`previous_response_id`'s conversation, already as items), then this request's input.
 */
export function toChatRequest(body: ResponsesRequest, earlier: InputItem[]): ChatCompletionRequest {
  refuseUnsupported(body);
  const input = inputItems(body.input);
  if (input.length === 0) throw invalidField('input', 'give at least one input item or a string');
  const messages: ChatMessage[] = [
    ...(body.instructions ? [{ role: 'system' as const, content: body.instructions }] : []),
    ...toChatMessages(earlier, 'previous_response_id'),
    ...toChatMessages(input),
  ];
  const out: ChatCompletionRequest = { messages, stream: body.stream === true };
  if (body.model !== undefined) out.model = body.model;
  if (body.models !== undefined) out.models = body.models;
  if (typeof body.max_output_tokens === 'number') out.max_tokens = body.max_output_tokens;
  if (typeof body.temperature === 'number') out.temperature = body.temperature;
  if (typeof body.top_p === 'number') out.top_p = body.top_p;
  const effort = effortOf(body.reasoning?.effort);
  if (effort !== undefined) out.reasoning_effort = effort;
  const format = responseFormat(body.text?.format);
  if (format !== undefined) out.response_format = format as ChatCompletionRequest['response_format'];
  const tools = chatTools(body.tools);
  if (tools) {
    out.tools = tools;
    if (body.tool_choice !== undefined) out.tool_choice = chatToolChoice(body.tool_choice);
    if (typeof body.parallel_tool_calls === 'boolean') out.parallel_tool_calls = body.parallel_tool_calls;
  } else if (body.tool_choice !== undefined && body.tool_choice !== 'none' && body.tool_choice !== 'auto') {
    throw invalidField('tool_choice', 'a tool must be chosen among tools, and none are given');
  }
  return out;
}

/** Chat fields as a Responses request names them, for refusals the chat path makes. */
const FIELD_NAMES: Record<string, string> = {
  messages: 'input',
  max_tokens: 'max_output_tokens',
  max_completion_tokens: 'max_output_tokens',
  response_format: 'text.format',
  reasoning_effort: 'reasoning.effort',
};

/** A refusal of the chat path, naming the field as the client sent it (`'max_tokens'` → `'max_output_tokens'`). */
export function inResponsesTerms(error: unknown): unknown {
  if (!(error instanceof RequestRefused)) return error;
  const field = /^'([a-z_]+)'/.exec(error.message)?.[1];
  const renamed = field !== undefined && Object.hasOwn(FIELD_NAMES, field) ? FIELD_NAMES[field] : undefined;
  if (field === undefined || renamed === undefined) return error;
  return new RequestRefused(
    error.kind,
    `'${renamed}'${error.message.slice(field.length + 2)}`,
    error.headers,
  );
}
