import { randomBytes } from 'node:crypto';
import type { ChatAdapter, ChatBody, ChatCompletion, ReportedUsage } from '../../contracts/chat.ts';
import { type ChatMessageLike, countTextTokensAsync } from '../../tokens/count.ts';
import { type EchoResult, echoChat, echoChunks } from './echo.ts';
import { type Shaped, shapeEcho } from './shaped.ts';

const usageObject = (usage: ReportedUsage) => ({
  prompt_tokens: usage.promptTokens,
  completion_tokens: usage.completionTokens,
  total_tokens: usage.promptTokens + usage.completionTokens,
});

/** One answer of the echo: its text (or tool call), usage for all `n` choices, and why it stopped. */
interface EchoAnswer {
  id: string;
  shaped: Shaped;
  result: EchoResult;
  choices: number;
  usage: ReportedUsage;
  finishReason: 'stop' | 'length' | 'tool_calls';
}

async function answer(body: ChatBody): Promise<EchoAnswer> {
  const limit = (body.max_completion_tokens ?? body.max_tokens) as number;
  const choices = typeof body.n === 'number' && body.n > 1 ? body.n : 1;
  let shaped = { kind: 'text', text: '' } as Shaped;
  const extras = [body.tools, body.response_format].filter((part) => part !== undefined);
  const result = await echoChat({
    messages: body.messages as ChatMessageLike[],
    maxTokens: limit,
    shape: (text) => {
      shaped = shapeEcho(body, text);
      return shaped.kind === 'tool' ? shaped.arguments : shaped.text;
    },
    // As the gateway counts a request's input (src/chat/service.ts), so the bill never passes the hold.
    extraInputTokens: extras.length > 0 ? await countTextTokensAsync(JSON.stringify(extras)) : 0,
  });
  const finishReason =
    shaped.kind === 'tool' && result.finishReason === 'stop' ? 'tool_calls' : result.finishReason;
  return {
    // Unique per completion, as a provider's are: logs, batch outputs and replays tell them apart by it.
    id: `chatcmpl-${randomBytes(12).toString('hex')}`,
    shaped,
    result,
    choices,
    // Every choice is the same echo, and each is output billed.
    usage: {
      promptTokens: result.usage.promptTokens,
      completionTokens: result.usage.completionTokens * choices,
      cachedPromptTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
    },
    finishReason,
  };
}

const toolCallId = (id: string) => `call_${id.slice(-24)}`;

function message(echo: EchoAnswer): Record<string, unknown> {
  if (echo.shaped.kind !== 'tool') return { role: 'assistant', content: echo.result.content, refusal: null };
  return {
    role: 'assistant',
    content: null,
    refusal: null,
    tool_calls: [
      {
        id: toolCallId(echo.id),
        type: 'function',
        function: { name: echo.shaped.name, arguments: echo.result.content },
      },
    ],
  };
}

/** The built-in provider as an adapter like any other: the deterministic echo, in the chat-completions format. */
export const localChat: ChatAdapter = {
  async complete(call) {
    const echo = await answer(call.body);
    const completion: ChatCompletion = {
      id: echo.id,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: call.upstream.model,
      choices: Array.from({ length: echo.choices }, (_, index) => ({
        index,
        message: message(echo),
        logprobs: null,
        finish_reason: echo.finishReason,
      })),
      usage: usageObject(echo.usage),
    };
    return { completion, usage: echo.usage };
  },

  async *stream(call) {
    const echo = await answer(call.body);
    const base = {
      id: echo.id,
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model: call.upstream.model,
    };
    const each = (delta: Record<string, unknown>, finish: string | null = null) =>
      Array.from({ length: echo.choices }, (_, index) => ({
        index,
        delta,
        logprobs: null,
        finish_reason: finish,
      }));
    const tool = echo.shaped.kind === 'tool' ? echo.shaped : undefined;
    const opening = tool
      ? {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              index: 0,
              id: toolCallId(echo.id),
              type: 'function',
              function: { name: tool.name, arguments: '' },
            },
          ],
        }
      : { role: 'assistant', content: '' };
    yield { chunk: { ...base, choices: each(opening) } };
    for (const piece of echoChunks(echo.result)) {
      if (call.signal.aborted) return;
      const delta = tool
        ? { tool_calls: [{ index: 0, function: { arguments: piece } }] }
        : { content: piece };
      yield { chunk: { ...base, choices: each(delta) } };
    }
    yield { chunk: { ...base, choices: each({}, echo.finishReason) } };
    yield { chunk: { ...base, choices: [], usage: usageObject(echo.usage) }, usage: echo.usage };
  },
};
