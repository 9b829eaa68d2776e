import type { CatalogModel } from '../catalog/types.ts';
import { type ChatDeps, type ChatOutcome, chatOutcome, chatPlan } from '../chat/complete.ts';
import { type ChatTarget, chatModels, resolveChatModel } from '../chat/models.ts';
import type { ChatCompletionRequest } from '../chat/request.ts';
import { chatBill, type PreparedChat } from '../chat/service.ts';
import type { ChatChunk, ReportedUsage } from '../contracts/chat.ts';
import { invalidField, RequestRefused } from '../contracts/errors.ts';
import { meteredCall, serve } from '../pipeline/call.ts';
import { MeteredStream, type Opened } from '../pipeline/stream.ts';
import type { CallContext } from '../pipeline/types.ts';
import { UpstreamError } from '../providers/errors.ts';
import { openAiTextCompletions, type TextCompletion } from '../providers/openai/completions.ts';
import type { CompletionsRequest } from './schema.ts';

/** The instruct-era models, the only ones OpenAI (and a compatible provider) serves legacy completions for. */
const INSTRUCT_ERA = /^(ada|babbage|curie|davinci|text-davinci|gpt-3\.5-turbo-instruct)/;

/** OpenAI's default output limit for a legacy completion. */
const DEFAULT_MAX_TOKENS = 16;

function hasTextCompletions(model: CatalogModel): boolean {
  return model.api === 'openai' && INSTRUCT_ERA.test(model.providerModelId);
}

/**
 * The checks before anything is held: the model exists and serves legacy completions; the prompt is one text.
 * Every other model is refused with the way to ask it in the chat format.
 */
export function checkTextCompletion(deps: ChatDeps, body: CompletionsRequest): ChatTarget {
  // Resolved as a chat request resolves it: an unknown model, or one whose provider is not configured, is
  // refused the same way. The served call reuses it rather than resolving it again.
  const target = resolveChatModel(deps.catalog, deps.env, deps.timeoutMs, body.model);
  const { model } = target;
  if (!hasTextCompletions(model)) {
    throw invalidField(
      'model',
      `${model.id} does not serve the legacy completions API (only instruct-era models such as ` +
        `openai/gpt-3.5-turbo-instruct do): use POST /v1/chat/completions with messages: [{role: 'user', content: prompt}], ` +
        'or POST /v1/responses with input: prompt',
    );
  }
  if (typeof body.n === 'number' && body.n > 1) throw invalidField('n', 'one completion per request');
  if (typeof body.best_of === 'number' && body.best_of > 1) {
    throw invalidField('best_of', 'one candidate per request (best_of bills every candidate it discards)');
  }
  return target;
}

const promptText = (body: CompletionsRequest) =>
  typeof body.prompt === 'string' ? body.prompt : body.prompt[0];

/**
 * How the pipeline holds and bills a legacy completion: as the chat completion of the prompt as one user
 * message, the same tokens at the same prices; a `suffix`, billed as input too, as a second one. Only the model
 * asked is tried: a fallback would not speak this format.
 */
function counted(body: CompletionsRequest): ChatCompletionRequest {
  return {
    model: body.model,
    models: [body.model],
    messages: [
      { role: 'user', content: promptText(body) ?? '' },
      ...(body.suffix ? [{ role: 'user' as const, content: body.suffix }] : []),
    ],
    max_tokens: body.max_tokens ?? DEFAULT_MAX_TOKENS,
    ...(typeof body.temperature === 'number' && { temperature: body.temperature }),
    ...(typeof body.top_p === 'number' && { top_p: body.top_p }),
  };
}

/**
 * A refusal of the chat path, naming the field as a legacy request has it: the prompt and its suffix are the
 * `'messages'` the context-window check counts.
 */
const rethrowInCompletionsTerms = (error: unknown): never => {
  if (!(error instanceof RequestRefused) || !error.message.startsWith("'messages': ")) throw error;
  throw new RequestRefused(error.kind, `'prompt'${error.message.slice("'messages'".length)}`, error.headers);
};

const choiceText = (completion: TextCompletion): string =>
  completion.choices.map((c) => ((c as { text?: unknown }).text as string | undefined) ?? '').join('');

/** A legacy completion through the pipeline, settled: the provider's answer (its model the gateway's id). */
export async function completeText(
  deps: ChatDeps,
  context: CallContext,
  body: CompletionsRequest,
  /** The model as `checkTextCompletion` resolved it. */
  checked?: ChatTarget,
): Promise<ChatOutcome & { completion: TextCompletion }> {
  const asked = counted(body);
  const { result, outcome } = await meteredCall(deps, {
    ...chatPlan(
      deps,
      context,
      asked,
      (target, prepared) =>
        openAiTextCompletions.complete({
          body,
          upstream: target.upstream,
          maxTokens: prepared.outputLimit,
          signal: context.signal,
        }),
      'none',
      chatModels(deps, context, asked, checked),
    ),
    bill: ({ completion, usage }, prepared) => chatBill(prepared, usage, choiceText(completion)),
  }).catch(rethrowInCompletionsTerms);
  return { ...chatOutcome(outcome), completion: { ...result.completion, model: outcome.model.id } };
}

/**
 * One item of a legacy stream: the provider's chunk, and the same as a chat chunk (its text as `delta.content`),
 * the form the request log assembles a stream from.
 */
export interface TextItem {
  chunk: ChatChunk;
  text: TextCompletion;
  usage?: ReportedUsage;
}

function asItem(raw: { chunk: TextCompletion; usage?: ReportedUsage }): TextItem {
  const choices = raw.chunk.choices.map((c) => {
    const choice = c as { index?: unknown; text?: unknown; finish_reason?: unknown };
    return {
      index: choice.index ?? 0,
      delta: { content: choice.text ?? '' },
      finish_reason: choice.finish_reason ?? null,
    };
  });
  return {
    chunk: { id: raw.chunk.id, model: raw.chunk.model, choices },
    text: raw.chunk,
    ...(raw.usage && { usage: raw.usage }),
  };
}

/** A streamed legacy completion, opened at its first chunk and settled by the pipeline when it ends. */
export async function streamText(
  deps: ChatDeps,
  context: CallContext,
  body: CompletionsRequest,
  /** The model as `checkTextCompletion` resolved it. */
  checked?: ChatTarget,
): Promise<MeteredStream<TextItem, PreparedChat>> {
  const asked = counted(body);
  const served = await serve(
    deps,
    chatPlan(
      deps,
      context,
      asked,
      async (target, prepared): Promise<Opened<TextItem>> => {
        const source = openAiTextCompletions
          .stream({
            body,
            upstream: target.upstream,
            maxTokens: prepared.outputLimit,
            signal: context.signal,
          })
          [Symbol.asyncIterator]();
        const rest: AsyncIterator<TextItem> = {
          next: async () => {
            const next = await source.next();
            return next.done ? { done: true, value: undefined } : { done: false, value: asItem(next.value) };
          },
          return: async () => {
            await source.return?.();
            return { done: true, value: undefined };
          },
        };
        const first = await rest.next();
        if (first.done) throw new UpstreamError('server', 'the provider closed the stream without a chunk');
        return { first: first.value, rest };
      },
      'none',
      chatModels(deps, context, asked, checked),
    ),
  ).catch(rethrowInCompletionsTerms);
  let produced = '';
  let usage: ReportedUsage | undefined;
  return new MeteredStream(deps, served, {
    observe(item) {
      produced += choiceText(item.text);
      if (item.usage) usage = item.usage;
    },
    bill: () => chatBill(served.reserved, usage, produced),
  });
}
