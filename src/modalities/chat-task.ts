import type { CapabilityId } from '../catalog/capabilities.ts';
import { endpointOf } from '../catalog/capabilities.ts';
import { findModel } from '../catalog/extra-models.ts';
import type { CatalogModel } from '../catalog/types.ts';
import { type ChatDeps, completeChat } from '../chat/complete.ts';
import { findChatModel } from '../chat/models.ts';
import { RequestRefused } from '../contracts/errors.ts';
import { outcomeHeaders } from '../pipeline/headers.ts';
import type { RequestContext, Served } from '../pipeline/priced.ts';
import { isAvailable } from '../providers/registry.ts';
import { reportedCount } from '../providers/reply.ts';
import { countTextsAsync, countTextTokensAsync } from '../tokens/count.ts';

/**
 * Endpoints answered by a chat model (translation through an LLM, classification, evaluation) go through the chat
 * path itself: the same model resolution, hold, configured fallbacks, retries and settlement as
 * POST /v1/chat/completions, billed by the token.
 */

/** Chat models tried, in order, when such a request names none: the first this gateway can reach is used. */
export const PREFERRED_TASK_CHAT_MODELS = [
  'openai/gpt-4o-mini',
  'anthropic/claude-haiku-4-5',
  'google/gemini-2.5-flash',
  'mistral/mistral-small-latest',
];

export interface TaskUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** The provider reported no usage: these are the gateway's counts. */
  estimated?: true;
}

export interface ChatAnswer {
  text: string;
  finishReason: string | undefined;
  usage: TaskUsage;
}

export interface ChatTask {
  model: CatalogModel;
  system: string;
  user: string;
  maxTokens: number;
  /** Asks for structured output: OpenAI's `response_format` json_schema, strict. */
  schema?: { name: string; schema: Record<string, unknown> };
}

const needsText: Partial<Record<CapabilityId, string>> = { json_mode: 'cannot answer in JSON' };

/**
 * The chat model a task request names, or a 400: a model of another kind names the endpoint that serves it, and a
 * chat model without a capability the task needs says so.
 */
export function taskChatModel(
  source: Pick<ChatDeps, 'catalog' | 'env'>,
  id: string,
  endpoint: { path: string; takes: string },
  needs: readonly CapabilityId[],
): CatalogModel {
  const model = findChatModel(source.catalog, source.env, id);
  if (!model) {
    throw new RequestRefused('model_not_found', `The model '${id}' does not exist; see GET /v1/models`);
  }
  if (model.modality !== 'text' || !model.capabilities.includes('chat')) {
    const right = endpointOf(model.capabilities);
    throw new RequestRefused(
      'invalid',
      `'model': ${model.id} cannot serve POST ${endpoint.path}, which takes ${endpoint.takes}; call it with ${right.method} ${right.path}`,
    );
  }
  for (const capability of needs) {
    if (!model.capabilities.includes(capability)) {
      throw new RequestRefused(
        'invalid',
        `'model': ${model.id} ${needsText[capability] ?? `lacks the ${capability} capability`}, which POST ${endpoint.path} needs`,
      );
    }
  }
  return model;
}

/** The first preferred chat model this gateway can reach and bill, or undefined. */
export function defaultTaskChatModel(source: Pick<ChatDeps, 'catalog' | 'env'>): string | undefined {
  return PREFERRED_TASK_CHAT_MODELS.find((id) => {
    const model = findModel(source.catalog, id);
    return (
      model !== undefined &&
      model.prices.inputNanosPerMillion !== null &&
      model.prices.outputNanosPerMillion !== null &&
      isAvailable(model, source.env)
    );
  });
}

/**
 * The output limit sent for a task: what the task needs, plus room for a reasoning model to think, within what the
 * model allows (so that the chat path does not refuse a limit the client never sent).
 */
function outputLimit(task: ChatTask, inputTokens: number): number {
  const wanted = task.maxTokens + (task.model.quirks.reasoning ? 4096 : 0);
  const room = task.model.contextWindow === null ? wanted : task.model.contextWindow - inputTokens - 1;
  return Math.max(1, Math.min(wanted, task.model.maxOutputTokens ?? wanted, room));
}

/** One chat completion for a task, billed as chat is; the answer's text, why it stopped, and the tokens billed. */
export async function askChatModel(
  deps: ChatDeps,
  context: RequestContext,
  task: ChatTask,
): Promise<Served<ChatAnswer>> {
  const messages = [
    { role: 'system' as const, content: task.system },
    { role: 'user' as const, content: task.user },
  ];
  const [systemTokens = 0, userTokens = 0] = await countTextsAsync([task.system, task.user]);
  const estimate = systemTokens + userTokens + 16;
  const served = await completeChat(deps, context, {
    model: task.model.id,
    messages,
    max_tokens: outputLimit(task, estimate),
    // Reasoning models of some providers refuse sampling parameters; the others answer most repeatably at 0.
    ...(task.model.quirks.noSampling ? {} : { temperature: 0 }),
    ...(task.schema && {
      response_format: {
        type: 'json_schema',
        json_schema: { name: task.schema.name, strict: true, schema: task.schema.schema },
      },
    }),
  });
  const choice = served.completion.choices[0] as
    | { message?: { content?: unknown }; finish_reason?: unknown }
    | undefined;
  const text = typeof choice?.message?.content === 'string' ? choice.message.content : '';
  const reported = served.completion.usage as
    | { prompt_tokens?: unknown; completion_tokens?: unknown }
    | undefined;
  const prompt = reportedCount(reported?.prompt_tokens);
  const completion = reportedCount(reported?.completion_tokens);
  const counted = prompt !== undefined && completion !== undefined ? 0 : await countTextTokensAsync(text);
  const usage: TaskUsage =
    prompt !== undefined && completion !== undefined
      ? { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
      : {
          prompt_tokens: served.usage.promptTokens,
          completion_tokens: counted,
          total_tokens: served.usage.promptTokens + counted,
          estimated: true,
        };
  return {
    ...served,
    result: {
      text,
      finishReason: typeof choice?.finish_reason === 'string' ? choice.finish_reason : undefined,
      usage,
    },
  };
}

/**
 * A model's answer the gateway cannot use, after it has been billed: the provider's failure (502), with the headers a
 * served call carries, so the client sees what it was charged.
 */
export function unusableAnswer(served: Served<unknown>, why: string): RequestRefused {
  return new RequestRefused(
    'upstream_failed',
    `The provider failed: ${served.model.id}: ${why}`,
    outcomeHeaders(served),
  );
}

/** The JSON object a model answered, tolerating a Markdown code fence around it; undefined when it is not one. */
export function answeredObject(text: string): Record<string, unknown> | undefined {
  const unfenced = text
    .trim()
    .replace(/^```(?:json)?\s*/i, '')
    .replace(/\s*```$/, '');
  try {
    const value: unknown = JSON.parse(unfenced);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
