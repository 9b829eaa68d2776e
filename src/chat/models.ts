import { permitModel } from '../accounts/model-access.ts';
import { findNamedModel } from '../catalog/bare-ids.ts';
import { endpointOf } from '../catalog/capabilities.ts';
import type { Catalog, CatalogModel } from '../catalog/types.ts';
import type { ChatAdapter, Upstream } from '../contracts/chat.ts';
import { RequestRefused } from '../contracts/errors.ts';
import type { CallContext, PipelineDeps } from '../pipeline/types.ts';
import { providerEnv } from '../provider-env.ts';
import { notOffered } from '../providers/offered-models.ts';
import { adapterFor, isAvailable, upstreamOf } from '../providers/registry.ts';
import type { ChatCompletionRequest } from './request.ts';
import { type Routed, routes } from './routed.ts';

/**
 * What `auto` (or no model) resolves to here. Chat requests never get this far with one: the router chooses their
 * model first (chat/routed.ts); only a caller checking a model name on its own resolves `auto` to this default.
 */
export const DEFAULT_CHAT_MODEL = 'local/echo';

export interface ChatTarget {
  model: CatalogModel;
  upstream: Upstream;
  adapter: ChatAdapter;
}

/** The catalog model a chat request names, with where and how to reach it; refusals name what is wrong. */
export function resolveChatModel(
  catalog: Catalog,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
  requested: string | undefined,
): ChatTarget {
  const id =
    requested === undefined || requested === 'auto' || requested === 'auto/text'
      ? DEFAULT_CHAT_MODEL
      : requested;
  // An eval's winner is resolved per account before a request reaches the pipeline (http/eval-alias.ts).
  if (id.startsWith('eval:')) {
    throw new RequestRefused(
      'invalid',
      `'model': ${id} names an eval's winner only as the model of /v1/chat/completions and /v1/messages`,
    );
  }
  const model = findChatModel(catalog, env, id);
  if (!model) throw new RequestRefused('model_not_found', `The model '${id}' does not exist`);
  if (model.modality !== 'text') {
    const where = endpointText(model);
    throw new RequestRefused('invalid', `'model': ${id} serves ${model.modality}, not chat; call ${where}`);
  }
  if (model.prices.inputNanosPerMillion === null || model.prices.outputNanosPerMillion === null) {
    throw new RequestRefused('invalid', `'model': ${id} has no per-token price, so it cannot be billed`);
  }
  const adapter = adapterFor(model, 'chat');
  const upstream = upstreamOf(model, env, timeoutMs);
  // A provider-less id is named with the model it resolved to, so the client sees which provider to configure.
  const named = model.id.toLowerCase() === id.toLowerCase() ? model.id : `${id} (${model.id})`;
  if (!adapter || !upstream) {
    const why = adapter
      ? `set ${providerEnv(model.provider).keyVars.join(' or ')}`
      : 'no adapter speaks its API yet';
    throw new RequestRefused('invalid', `'model': ${named} is not available on this gateway (${why})`);
  }
  // Refused before anything is held: the provider would answer 404 for a model its list does not name.
  const unoffered = notOffered(model, env);
  if (unoffered) {
    throw new RequestRefused(
      'model_not_found',
      `'model': ${named} is not available on this gateway: ${unoffered}`,
    );
  }
  return { model, upstream, adapter };
}

/** The model an id names for chat, a provider-less one (`gpt-4o-mini`) included; undefined when none. */
export function findChatModel(
  catalog: Catalog,
  env: NodeJS.ProcessEnv,
  id: string,
): CatalogModel | undefined {
  return findNamedModel(catalog, id, {
    servable: (model) => isAvailable(model, env),
    fits: (model) => model.modality === 'text',
  });
}

function endpointText(model: CatalogModel): string {
  const endpoint = endpointOf(model.capabilities);
  return `${endpoint.method} ${endpoint.path}`;
}

/** What resolving a request's named models came to: those that resolved and the key may use, in order. */
export interface Named {
  targets: ChatTarget[];
  /** The refusal of the first that did not (unknown, unavailable, not allowed); the rest were not tried. */
  refused?: unknown;
}

/**
 * One chat request's models, resolved once (catalog entry, bare id, availability, adapter, upstream, the key's
 * allowed models) and handed to every step that needs them: the cache step keys and refuses by them, the served
 * call tries them. A refusal is kept as a value and thrown by the step that would have met it first, so that the
 * order of the checks (and of their answers) is the order the steps run in.
 */
export interface ChatModels {
  /** The key's allowed models (null: all), as the live state gave them for this request. */
  allowed: readonly string[] | null;
  /** The router's decision, once made: by the cache step when it looks up or stores, else by the served call. */
  routed: Routed;
  /** For a request that names its models (not routed): `model`, then its fallbacks. */
  named?: Named;
}

/** Config-file fallbacks, per model, for a request that gives no `models` of its own. */
export type Fallbacks = Record<string, string[]>;

/**
 * A request's models. `known` is a target its caller already resolved for `body.model` (legacy completions check
 * the model's format before anything else), reused rather than looked up again.
 */
export function chatModels(
  deps: Pick<PipelineDeps, 'spending' | 'catalog' | 'env' | 'timeoutMs'> & { fallbacks: Fallbacks },
  context: Pick<CallContext, 'auth'>,
  body: ChatCompletionRequest,
  known?: ChatTarget,
): ChatModels {
  const allowed = deps.spending.allowedModels(context.auth);
  if (routes(body)) return { allowed, routed: {} };
  const resolve = (id: string | undefined) =>
    known && id === body.model ? known : resolveChatModel(deps.catalog, deps.env, deps.timeoutMs, id);
  return { allowed, routed: {}, named: resolveNamed(requestedIds(deps.fallbacks, body), allowed, resolve) };
}

/**
 * The models to try, in order: `model`, then the fallbacks of `models` (as OpenRouter takes them), or else the
 * fallbacks configured for the model.
 */
function requestedIds(fallbacks: Fallbacks, body: ChatCompletionRequest): (string | undefined)[] {
  const given = Array.isArray(body.models)
    ? body.models.filter((m): m is string => typeof m === 'string')
    : [];
  // Own properties only: a model named `constructor` must not find Object.prototype's.
  const configured =
    body.model !== undefined && Object.hasOwn(fallbacks, body.model) ? fallbacks[body.model] : undefined;
  const chosen = given.length > 0 || body.model === undefined ? given : (configured ?? []);
  // Most requests name one model and no fallback: no list to merge.
  if (chosen.length === 0) return [body.model];
  return [...new Set([...(body.model === undefined ? [] : [body.model]), ...chosen])];
}

/**
 * Every candidate is checked before the first is held: a fallback the key may not use refuses the request rather
 * than being skipped in silence or reached only once the first model has failed.
 */
function resolveNamed(
  ids: (string | undefined)[],
  allowed: readonly string[] | null,
  resolve: (id: string | undefined) => ChatTarget,
): Named {
  const targets: ChatTarget[] = [];
  for (const id of ids) {
    try {
      const target = resolve(id);
      permitModel(allowed, target.model.id, { ...(id !== undefined && { named: id }) });
      targets.push(target);
    } catch (refused) {
      return { targets, refused };
    }
  }
  return { targets };
}

/** The named models as the served call tries them: all of them, or the first refusal. */
export function namedTargets(named: Named): ChatTarget[] {
  if ('refused' in named) throw named.refused;
  return named.targets;
}
