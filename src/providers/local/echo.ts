import { type ChatMessageLike, countChatInputTokensAsync, truncateToTokens } from '../../tokens/count.ts';

export interface EchoRequest {
  messages: ChatMessageLike[];
  maxTokens: number;
  /** What is produced from the echoed text (a tool call's arguments, a JSON answer); the text itself by default. */
  shape?: (text: string) => string;
  /** Input billed beside the messages (tool definitions, a response schema), as the gateway counts it. */
  extraInputTokens?: number;
}

export interface EchoResult {
  content: string;
  finishReason: 'stop' | 'length';
  usage: { promptTokens: number; completionTokens: number };
}

/** Replies with the last user message, cut to maxTokens; deterministic and free of I/O. */
export async function echoChat(request: EchoRequest): Promise<EchoResult> {
  const echoed = lastUserText(request.messages);
  const reply = request.shape ? request.shape(echoed) : echoed;
  const cut = truncateToTokens(reply, request.maxTokens);
  // Counted exactly, as the gateway counts the hold when it has the time (else above it), so the usage is never more
  // than was held: a busy machine must not bill an upper bound the hold did not use.
  const counted = await countChatInputTokensAsync(request.messages, { exact: true });
  const promptTokens = counted + (request.extraInputTokens ?? 0);
  return {
    content: cut.text,
    finishReason: cut.truncated ? 'length' : 'stop',
    usage: { promptTokens, completionTokens: cut.tokens },
  };
}

/** Streaming deltas: each is one word plus the whitespace after it, so they join back to content. */
export function* echoChunks(result: EchoResult): Generator<string> {
  // Leading whitespace rides with the first word; whitespace-only content is a single delta.
  const words = result.content.match(/\s*\S+\s*/g);
  if (words) yield* words;
  else if (result.content !== '') yield result.content;
}

function lastUserText(messages: unknown): string {
  if (!Array.isArray(messages)) return '';
  for (let i = messages.length - 1; i >= 0; i--) {
    const message: unknown = messages[i];
    if (typeof message !== 'object' || message === null) continue;
    const { role, content } = message as { role?: unknown; content?: unknown };
    if (role === 'user') return contentText(content);
  }
  return '';
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const part of content) {
    if (typeof part !== 'object' || part === null) continue;
    const { type, text } = part as { type?: unknown; text?: unknown };
    if (type === 'text' && typeof text === 'string') texts.push(text);
  }
  return texts.join('\n');
}
