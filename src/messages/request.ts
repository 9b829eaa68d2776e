import type { ChatCompletionRequest } from '../chat/request.ts';
import type {
  AnthropicBlock,
  AnthropicMessage,
  AnthropicSystem,
  ImageSource,
  MessagesRequest,
  ThinkingConfig,
  ToolChoice,
  ToolResultBlock,
} from './schema.ts';

type ChatMessage = ChatCompletionRequest['messages'][number];
type ChatPart = Record<string, unknown>;
type ReasoningEffort = NonNullable<ChatCompletionRequest['reasoning_effort']>;

/**
 * The ceilings of the Anthropic adapter's thinking budgets (src/providers/anthropic/request.ts): a budget maps to
 * the smallest effort that allows at least as much thinking, so it survives the way back to Anthropic.
 */
const EFFORT_CEILINGS: [ReasoningEffort, number][] = [
  ['low', 1024],
  ['medium', 4096],
  ['high', 16_384],
  ['xhigh', 32_768],
];

const textOf = (blocks: { type: string; text?: unknown }[]): string[] =>
  blocks.flatMap((block) => (block.type === 'text' && typeof block.text === 'string' ? [block.text] : []));

function imagePart(source: ImageSource): ChatPart {
  const url = source.type === 'base64' ? `data:${source.media_type};base64,${source.data}` : source.url;
  return { type: 'image_url', image_url: { url } };
}

function systemText(system: AnthropicSystem): string {
  return typeof system === 'string' ? system : textOf(system).join('\n');
}

/**
 * A tool message carries text only, so a result's images ride in the user message that follows it. The
 * chat-completions format has no error flag: a failed tool's result says so in its text instead.
 */
function toolResult(block: ToolResultBlock): { message: ChatMessage; images: ChatPart[] } {
  const content = block.content ?? '';
  const text = typeof content === 'string' ? content : textOf(content).join('\n');
  const images =
    typeof content === 'string'
      ? []
      : content.flatMap((b) => (b.type === 'image' ? [imagePart(b.source)] : []));
  return {
    message: {
      role: 'tool',
      tool_call_id: block.tool_use_id,
      content: block.is_error ? `Error: ${text}` : text,
    },
    images,
  };
}

/** Tool results first, as the chat-completions format wants them right after the assistant's calls. */
function userMessages(blocks: AnthropicBlock[]): ChatMessage[] {
  const tools: ChatMessage[] = [];
  const images: ChatPart[] = [];
  const parts: ChatPart[] = [];
  for (const block of blocks) {
    if (block.type === 'tool_result') {
      const result = toolResult(block);
      tools.push(result.message);
      images.push(...result.images);
    } else if (block.type === 'text') parts.push({ type: 'text', text: block.text });
    else if (block.type === 'image') parts.push(imagePart(block.source));
  }
  const content = [...images, ...parts];
  return content.length > 0 ? [...tools, { role: 'user', content }] : tools;
}

function assistantMessage(blocks: AnthropicBlock[]): ChatMessage[] {
  const text: string[] = [];
  const calls: unknown[] = [];
  for (const block of blocks) {
    if (block.type === 'text') text.push(block.text);
    else if (block.type === 'tool_use') {
      calls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input) },
      });
    }
  }
  if (text.length === 0 && calls.length === 0) return [];
  return [
    {
      role: 'assistant',
      content: text.length > 0 ? text.join('') : null,
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
    },
  ];
}

function chatMessagesOf(message: AnthropicMessage): ChatMessage[] {
  const { role, content } = message;
  if (typeof content === 'string') return [{ role, content }];
  switch (role) {
    case 'user':
      return userMessages(content);
    case 'assistant':
      return assistantMessage(content);
    case 'system':
      return [{ role, content: textOf(content).join('\n') }];
    default: {
      const _exhaustive: never = role;
      return _exhaustive;
    }
  }
}

/** The conversation in the chat-completions format, the top-level system prompt first. */
export function toChatMessages(
  system: AnthropicSystem | undefined,
  messages: AnthropicMessage[],
): ChatMessage[] {
  const prompt = system === undefined ? '' : systemText(system);
  return [
    ...(prompt === '' ? [] : [{ role: 'system' as const, content: prompt }]),
    ...messages.flatMap(chatMessagesOf),
  ];
}

/** `adaptive` lets the model decide, which is closest to a medium effort; `disabled` asks for none at all. */
export function reasoningEffort(thinking: ThinkingConfig | undefined): ReasoningEffort | undefined {
  if (thinking?.type === 'adaptive') return 'medium';
  if (thinking?.type !== 'enabled') return undefined;
  return EFFORT_CEILINGS.find(([, ceiling]) => thinking.budget_tokens <= ceiling)?.[0] ?? 'max';
}

function toolChoice(choice: ToolChoice): unknown {
  switch (choice.type) {
    case 'auto':
      return 'auto';
    case 'any':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
      return { type: 'function', function: { name: choice.name } };
    default: {
      const _exhaustive: never = choice;
      return _exhaustive;
    }
  }
}

/**
 * A Messages request as a chat-completions request. Dropped: `top_k` and `metadata` (no chat-completions
 * counterpart) and earlier turns' thinking blocks.
 */
export function toChatRequest(body: MessagesRequest): ChatCompletionRequest {
  const out: ChatCompletionRequest = {
    model: body.model,
    messages: toChatMessages(body.system, body.messages),
    max_tokens: body.max_tokens,
  };
  if (body.models !== undefined) out.models = body.models;
  if (body.stream) out.stream = true;
  if (body.temperature !== undefined) out.temperature = body.temperature;
  if (body.top_p !== undefined) out.top_p = body.top_p;
  if (body.stop_sequences !== undefined && body.stop_sequences.length > 0) out.stop = body.stop_sequences;
  const effort = reasoningEffort(body.thinking);
  if (effort !== undefined) out.reasoning_effort = effort;
  if (body.tools !== undefined && body.tools.length > 0) {
    out.tools = body.tools.map((tool) => ({
      type: 'function',
      function: {
        name: tool.name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        parameters: tool.input_schema,
      },
    }));
    // Without tools a choice means nothing, and OpenAI refuses one.
    if (body.tool_choice !== undefined) {
      out.tool_choice = toolChoice(body.tool_choice);
      if (body.tool_choice.type !== 'none' && body.tool_choice.disable_parallel_tool_use) {
        out.parallel_tool_calls = false;
      }
    }
  }
  return out;
}
