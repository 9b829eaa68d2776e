import type { KeyHolder } from '../accounts/live-state.ts';
import type { OwnKey } from '../accounts/provider-key-store.ts';
import type { CatalogModel } from '../catalog/types.ts';
import type { ChatDeps } from '../chat/complete.ts';
import type { BatchApi } from '../contracts/batch.ts';
import { type OwnKeys, ownKeyCredential, ownKeyName } from '../pipeline/own-key.ts';
import { batchApiOf } from '../providers/batch-apis.ts';
import { upstreamOf } from '../providers/registry.ts';

export type BatchUpstream = NonNullable<ReturnType<typeof upstreamOf>>;
export type BatchTarget = { api: BatchApi; upstream: BatchUpstream } | { unusable: string } | undefined;
type Owner = Pick<KeyHolder, 'accountId' | 'subAccountId'>;

/** The provider keys accounts bring, as upstream batches ask them: the requester's for a provider, then a key by id. */
export interface BatchOwnKeys extends OwnKeys {
  ownKeyById(holder: Owner, id: string): OwnKey | undefined;
}

export interface TargetDeps {
  chat: ChatDeps;
  ownKeys?: BatchOwnKeys | undefined;
}

/** The key an upstream batch is recorded with: a pool credential's name, or `byok:<name>` with the own key's id. */
export interface GroupKey {
  credential?: string;
  providerKeyId?: string;
}

/**
 * The key a new upstream batch goes to: the requester's own key for the provider when it has one (docs/providers.md,
 * Bring your own key), else the pool's draw, as a served call's. An own key the gateway cannot read gives way to the
 * pool only where the account allows it; without that the batch is recorded on it, and fails naming it. None (no
 * pool, or none in rotation) leaves the batch on the provider's single key, as before pools.
 */
export function drawCredential(deps: TargetDeps, owner: Owner, model: CatalogModel): GroupKey {
  if (model.provider === 'local') return {};
  const own = deps.ownKeys?.ownKey(owner, model.provider);
  if (own && !('unreadable' in own && deps.ownKeys?.fallback(owner.accountId)))
    return { credential: ownKeyCredential(own.name), providerKeyId: own.id };
  const drawn = deps.chat.credentials?.pick(model.provider, new Set())?.name;
  return drawn === undefined ? {} : { credential: drawn };
}

/**
 * Where and with which key an upstream batch is called: every call about it (submission, lookup by name, poll,
 * results, cancel) goes to the key recorded when it was prepared, which the provider holds it under. A credential
 * since removed from the pool, or refused by the provider, or an own key since removed (or no longer readable)
 * makes it unusable, with a message naming it (never another key's 404).
 */
export function batchTarget(
  deps: TargetDeps,
  owner: Owner,
  prepared: { model: string; credential?: string | undefined; providerKeyId?: string | undefined },
): BatchTarget {
  const { chat } = deps;
  const model = chat.catalog.get(prepared.model);
  const api = model && batchApiOf(model);
  const upstream = model && upstreamOf(model, chat.env, chat.timeoutMs);
  if (!api || !upstream || !model) return undefined;
  const ownKey = ownKeyName(prepared.credential);
  if (ownKey !== undefined) {
    // By id: a key registered since under the same name may belong to another of the provider's organizations.
    const id = prepared.providerKeyId;
    const key = id === undefined ? undefined : deps.ownKeys?.ownKeyById(owner, id);
    const yours = `your ${model.provider} key '${ownKey}' that submitted this batch`;
    if (!key) return { unusable: `${yours} has been removed` };
    if ('unreadable' in key)
      return { unusable: `${yours} cannot be read by the gateway (${key.unreadable})` };
    return { api, upstream: { ...upstream, apiKey: key.key } };
  }
  if (prepared.credential === undefined || !chat.credentials) return { api, upstream };
  const owned = chat.credentials.owner(model.provider, prepared.credential);
  if ('unusable' in owned)
    return {
      unusable: `the ${model.provider} credential '${prepared.credential}' that submitted this batch ${owned.unusable}`,
    };
  return { api, upstream: { ...upstream, apiKey: owned.key } };
}
