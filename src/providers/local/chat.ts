import type { ChatAdapter, ChatCompletion, ReportedUsage } from '../../contracts/chat.ts';
import type { ChatMessageLike } from '../../tokens/count.ts';
import { echoChat, echoChunks } from './echo.ts';

function usageOf(result: Awaited<ReturnType<typeof echoChat>>): ReportedUsage {
  return {
    promptTokens: result.usage.promptTokens,
    completionTokens: result.usage.completionTokens,
    cachedPromptTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
  };
}

const usageObject = (usage: ReportedUsage) => ({
  prompt_tokens: usage.promptTokens,
  completion_tokens: usage.completionTokens,
  total_tokens: usage.promptTokens + usage.completionTokens,
});

/** The built-in provider as an adapter like any other: the deterministic echo, in the chat-completions format. */
export const localChat: ChatAdapter = {
  async complete(call) {
    const limit = (call.body.max_completion_tokens ?? call.body.max_tokens) as number;
    const result = await echoChat({ messages: call.body.messages as ChatMessageLike[], maxTokens: limit });
    const usage = usageOf(result);
    const completion: ChatCompletion = {
      id: 'chatcmpl-local',
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: call.upstream.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: result.content, refusal: null },
          logprobs: null,
          finish_reason: result.finishReason,
        },
      ],
      usage: usageObject(usage),
    };
    return { completion, usage };
  },

  async *stream(call) {
    const limit = (call.body.max_completion_tokens ?? call.body.max_tokens) as number;
    const result = await echoChat({ messages: call.body.messages as ChatMessageLike[], maxTokens: limit });
    const base = {
      id: 'chatcmpl-local',
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model: call.upstream.model,
    };
    const choice = (delta: Record<string, unknown>, finish: string | null = null) => [
      { index: 0, delta, logprobs: null, finish_reason: finish },
    ];
    yield { chunk: { ...base, choices: choice({ role: 'assistant', content: '' }) } };
    for (const delta of echoChunks(result)) {
      if (call.signal.aborted) return;
      yield { chunk: { ...base, choices: choice({ content: delta }) } };
    }
    yield { chunk: { ...base, choices: choice({}, result.finishReason) } };
    const usage = usageOf(result);
    yield { chunk: { ...base, choices: [], usage: usageObject(usage) }, usage };
  },
};
