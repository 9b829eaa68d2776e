import { errors } from 'undici';
import type { KeyHolder } from '../accounts/live-state.ts';
import type { Discount } from '../billing/charge.ts';
import type { Spending } from '../billing/spending.ts';
import type { Catalog } from '../catalog/types.ts';
import { RequestRefused } from '../contracts/errors.ts';
import { UpstreamError } from '../providers/errors.ts';
import type { ProviderHealth } from '../providers/health.ts';
import type { ChatChunk, ChatCompletion, ReportedUsage } from '../providers/types.ts';
import { type ChatTarget, resolveChatModel } from './models.ts';
import type { ChatCompletionRequest } from './request.ts';
import { type PreparedChat, prepareChat, settleChat } from './service.ts';

export interface ChatDeps {
  spending: Spending;
  catalog: Catalog;
  env: NodeJS.ProcessEnv;
  health: ProviderHealth;
  /** How long to wait for an upstream's response headers. */
  timeoutMs: number;
  /** The longest Retry-After the gateway waits out itself before passing a 429 on. */
  maxRetryWaitMs: number;
  /** Per-model fallbacks from the config file, used when a request gives no `models` of its own. */
  fallbacks: Record<string, string[]>;
}

export interface Served {
  target: ChatTarget;
  prepared: PreparedChat;
  latencyMs: number;
}

const RATE_LIMIT_RETRIES = 2;

/**
 * The models to try, in order: `model`, then the fallbacks of `models` (as OpenRouter takes them), or else the
 * fallbacks configured for the model.
 */
function candidates(deps: ChatDeps, body: ChatCompletionRequest): ChatTarget[] {
  const given = Array.isArray(body.models)
    ? body.models.filter((m): m is string => typeof m === 'string')
    : [];
  // Own properties only: a model named `constructor` must not find Object.prototype's.
  const configured =
    body.model !== undefined && Object.hasOwn(deps.fallbacks, body.model)
      ? deps.fallbacks[body.model]
      : undefined;
  const fallbacks = given.length > 0 || body.model === undefined ? given : (configured ?? []);
  const ids = [...new Set([...(body.model === undefined ? [] : [body.model]), ...fallbacks])];
  return (ids.length > 0 ? ids : [undefined]).map((id) =>
    resolveChatModel(deps.catalog, deps.env, deps.timeoutMs, id),
  );
}

/** An upstream failure as the client sees it. */
export function clientError(error: unknown, model: string): unknown {
  // A connection that breaks while a response is being read fails inside the HTTP client, not as a status.
  if (error instanceof errors.UndiciError) {
    return new RequestRefused(
      'upstream_failed',
      `The provider's connection broke: ${model}: ${error.message}`,
    );
  }
  if (!(error instanceof UpstreamError)) return error;
  const where = `${model}: ${error.message}`;
  switch (error.failure) {
    case 'rate_limited': {
      const seconds = Math.max(1, Math.ceil((error.retryAfterMs ?? 1000) / 1000));
      return new RequestRefused('rate_limited', `The provider is rate limiting ${where}`, {
        'retry-after': String(seconds),
      });
    }
    case 'timeout':
      return new RequestRefused('upstream_timeout', `The provider timed out: ${where}`);
    case 'client':
      return new RequestRefused('invalid', `The provider refused the request: ${where}`);
    case 'server':
    case 'network':
    case 'unavailable':
      return new RequestRefused('upstream_failed', `The provider failed: ${where}`);
    default: {
      const _exhaustive: never = error.failure;
      return _exhaustive;
    }
  }
}

/** Runs one upstream call, waiting out the provider's own Retry-After (within bounds) on a 429. */
async function withRetries<T>(deps: ChatDeps, target: ChatTarget, call: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const started = performance.now();
    try {
      const result = await call();
      deps.health.record(target.model.provider, performance.now() - started, true);
      return result;
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      deps.health.record(target.model.provider, performance.now() - started, false);
      const wait = error.retryAfterMs ?? 250 * 2 ** attempt;
      if (error.failure !== 'rate_limited' || attempt >= RATE_LIMIT_RETRIES || wait > deps.maxRetryWaitMs)
        throw error;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/**
 * Tries each candidate model in turn: a reservation, the call, and on a retryable failure the hold's release and
 * the next candidate. The request is charged once, for the attempt that served it.
 */
export async function firstServing<T>(
  deps: ChatDeps,
  auth: KeyHolder,
  body: ChatCompletionRequest,
  requestId: string,
  tag: string | null,
  call: (target: ChatTarget, prepared: PreparedChat) => Promise<T>,
  discount: Discount = 'none',
): Promise<Served & { result: T }> {
  const targets = candidates(deps, body);
  let failure: unknown;
  for (const [index, target] of targets.entries()) {
    const prepared = await prepareChat(deps.spending, auth, target.model, body, requestId, tag, discount);
    const started = performance.now();
    try {
      const result = await withRetries(deps, target, () => call(target, prepared));
      return { target, prepared, result, latencyMs: Math.round(performance.now() - started) };
    } catch (error) {
      await deps.spending.release(prepared.hold, 'failed');
      failure = clientError(error, target.model.id);
      const last = index === targets.length - 1;
      if (last || !(error instanceof UpstreamError) || !error.retryable) throw failure;
    }
  }
  throw failure;
}

function upstreamBody(body: ChatCompletionRequest, prepared: PreparedChat) {
  const { max_completion_tokens: _ignored, ...rest } = body;
  return { ...rest, max_tokens: prepared.outputLimit };
}

export async function completeChat(
  deps: ChatDeps,
  auth: KeyHolder,
  body: ChatCompletionRequest,
  requestId: string,
  tag: string | null,
  signal: AbortSignal,
  discount: Discount = 'none',
): Promise<Served & { completion: ChatCompletion; costNanos: bigint }> {
  const served = await firstServing(
    deps,
    auth,
    body,
    requestId,
    tag,
    (target, prepared) =>
      target.adapter.complete({ body: upstreamBody(body, prepared), upstream: target.upstream, signal }),
    discount,
  );
  const { completion, usage } = served.result;
  const message = (completion.choices[0] as { message?: { content?: unknown } } | undefined)?.message;
  const text = typeof message?.content === 'string' ? message.content : '';
  const costNanos = await settleChat(deps.spending, served.prepared, usage, text);
  completion.model = served.target.model.id;
  return { ...served, completion, costNanos };
}

export interface OpenedStream extends Served {
  first: { chunk: ChatChunk; usage?: ReportedUsage };
  rest: AsyncIterator<{ chunk: ChatChunk; usage?: ReportedUsage }>;
}

/** Opens a stream and waits for its first chunk, so that a failing model can still fall back to the next. */
export async function openChatStream(
  deps: ChatDeps,
  auth: KeyHolder,
  body: ChatCompletionRequest,
  requestId: string,
  tag: string | null,
  signal: AbortSignal,
): Promise<OpenedStream> {
  const served = await firstServing(deps, auth, body, requestId, tag, async (target, prepared) => {
    const iterator = target.adapter
      .stream({ body: upstreamBody(body, prepared), upstream: target.upstream, signal })
      [Symbol.asyncIterator]();
    const first = await iterator.next();
    if (first.done) throw new UpstreamError('server', 'the provider closed the stream without a chunk');
    return { first: first.value, rest: iterator };
  });
  return { ...served, ...served.result };
}
