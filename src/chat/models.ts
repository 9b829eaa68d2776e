import { findNamedModel } from '../catalog/bare-ids.ts';
import { endpointOf } from '../catalog/capabilities.ts';
import type { Catalog, CatalogModel } from '../catalog/types.ts';
import type { ChatAdapter, Upstream } from '../contracts/chat.ts';
import { RequestRefused } from '../contracts/errors.ts';
import { providerEnv } from '../provider-env.ts';
import { notOffered } from '../providers/offered-models.ts';
import { adapterFor, isAvailable, upstreamOf } from '../providers/registry.ts';

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
