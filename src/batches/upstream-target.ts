import type { CatalogModel } from '../catalog/types.ts';
import type { ChatDeps } from '../chat/complete.ts';
import type { BatchApi } from '../contracts/batch.ts';
import { batchApiOf } from '../providers/batch-apis.ts';
import { upstreamOf } from '../providers/registry.ts';

export type BatchUpstream = NonNullable<ReturnType<typeof upstreamOf>>;
export type BatchTarget = { api: BatchApi; upstream: BatchUpstream } | { unusable: string } | undefined;

/**
 * The credential a new upstream batch goes to: the pool's draw, as a served call's. None (no pool, or none in
 * rotation) leaves the batch on the provider's single key, as before pools.
 */
export function drawCredential(chat: ChatDeps, model: CatalogModel): string | undefined {
  if (!chat.credentials || model.provider === 'local') return undefined;
  return chat.credentials.pick(model.provider, new Set())?.name;
}

/**
 * Where and with which key an upstream batch is called: every call about it (submission, lookup by name, poll,
 * results, cancel) goes to the credential recorded when it was prepared, which the provider holds it under. A
 * credential since removed from the pool, or refused by the provider, makes it unusable (never another key's 404).
 */
export function batchTarget(
  chat: ChatDeps,
  prepared: { model: string; credential?: string | undefined },
): BatchTarget {
  const model = chat.catalog.get(prepared.model);
  const api = model && batchApiOf(model);
  const upstream = model && upstreamOf(model, chat.env, chat.timeoutMs);
  if (!api || !upstream || !model) return undefined;
  if (prepared.credential === undefined || !chat.credentials) return { api, upstream };
  const owner = chat.credentials.owner(model.provider, prepared.credential);
  if ('unusable' in owner)
    return {
      unusable: `the ${model.provider} credential '${prepared.credential}' that submitted this batch ${owner.unusable}`,
    };
  return { api, upstream: { ...upstream, apiKey: owner.key } };
}
