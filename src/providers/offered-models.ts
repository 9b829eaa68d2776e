import { apiFamilyOf } from '../catalog/classify.ts';
import { callableModelId } from '../catalog/extra-models.ts';
import type { CatalogModel } from '../catalog/types.ts';

/** How one provider's model list stands: what it last listed, and whether the last attempts to ask failed. */
export interface ModelListStatus {
  provider: string;
  /** How many ids the last list held; null before one was fetched. */
  models: number | null;
  /** When the list now in use was fetched (refreshed at every successful fetch). */
  fetchedAt: Date | null;
  /** The last failure to ask, while it is the latest outcome; null once a fetch succeeds. */
  error: string | null;
  failedAt: Date | null;
}

interface ProviderList {
  /** Lower-cased ids as the provider listed them. */
  ids: ReadonlySet<string>;
  /** Anthropic's: a listed snapshot's id without its date, as the alias that calls it. */
  snapshotOf: ReadonlySet<string>;
  fetchedAt: Date;
}

/** A provider's dated snapshot (`claude-sonnet-4-5-20250929`) and the undated name it stands for. */
const SNAPSHOT = /^(.+)-\d{8}$/;

/**
 * What each configured provider says its key can use, for one gateway: filled by the model-list poller
 * (model-lists.ts), read wherever availability is decided (`isAvailable`, the modality endpoints, the router). A
 * provider whose list was never fetched is unknown, and its models count as available (the configured key is the
 * rule, as for providers that have no list).
 */
export class OfferedModels {
  private readonly lists = new Map<string, ProviderList>();
  private readonly failures = new Map<string, { error: string; at: Date }>();
  private readonly asked = new Set<string>();
  private changes = 0;

  /** Bumped whenever a provider's list changes, so that anything holding a view of availability looks again. */
  get version(): number {
    return this.changes;
  }

  /** Registers a provider the poller asks, so that its status shows before its first answer. */
  expect(provider: string): void {
    this.asked.add(provider);
  }

  /** A provider's list as just fetched; true when it differs from the one known before (or is the first). */
  listed(provider: string, ids: readonly string[], at: Date): boolean {
    this.asked.add(provider);
    this.failures.delete(provider);
    const lower = new Set(ids.map((id) => id.toLowerCase()));
    const before = this.lists.get(provider);
    const snapshotOf = new Set<string>();
    // Anthropic lists snapshots, while its aliases (`claude-sonnet-4-5`, `claude-3-7-sonnet-latest`) are what
    // the price list names; other providers list their aliases themselves.
    if (apiFamilyOf(provider) === 'anthropic') {
      for (const id of lower) {
        const stem = SNAPSHOT.exec(id)?.[1];
        if (stem) snapshotOf.add(stem);
      }
    }
    this.lists.set(provider, { ids: lower, snapshotOf, fetchedAt: at });
    const changed = !before || before.ids.size !== lower.size || [...lower].some((id) => !before.ids.has(id));
    if (changed) this.changes++;
    return changed;
  }

  /** A failed attempt to ask: the list known before (if any) stays in use. */
  failed(provider: string, error: string, at: Date): void {
    this.asked.add(provider);
    this.failures.set(provider, { error, at });
  }

  /**
   * Whether the model's provider offers it: true, a sentence saying why not, or undefined when its provider's list
   * is not known (no list fetched yet, or the provider has none).
   */
  offer(model: CatalogModel): true | string | undefined {
    const list = this.lists.get(model.provider);
    if (!list) return undefined;
    const id = callableModelId(model).toLowerCase();
    const aliases = [id, id.replace(/-latest$/, ''), id.replace(/-0$/, '')];
    if (list.ids.has(id) || aliases.some((alias) => list.snapshotOf.has(alias))) return true;
    return `${model.provider} does not offer '${callableModelId(model)}' to this gateway's key (its model list, fetched ${list.fetchedAt.toISOString()}, does not name it)`;
  }

  /** Providers whose list is known, with when it was fetched. */
  known(): { provider: string; fetchedAt: Date }[] {
    return [...this.lists].map(([provider, list]) => ({ provider, fetchedAt: list.fetchedAt }));
  }

  status(): ModelListStatus[] {
    return [...this.asked].sort().map((provider) => {
      const list = this.lists.get(provider);
      const failure = this.failures.get(provider);
      return {
        provider,
        models: list ? list.ids.size : null,
        fetchedAt: list?.fetchedAt ?? null,
        error: failure?.error ?? null,
        failedAt: failure?.at ?? null,
      };
    });
  }
}

/**
 * The offered models of the gateway whose provider configuration this is. Availability is asked as
 * `isAvailable(model, env)` all over the code; the lists belong to the same gateway as that configuration, so they
 * are found from it rather than threaded through every caller. A configuration without lists (the CLI, a unit test)
 * is the key rule alone.
 */
const byConfiguration = new WeakMap<object, OfferedModels>();

export function attachOfferedModels(env: NodeJS.ProcessEnv, offered: OfferedModels): void {
  byConfiguration.set(env, offered);
}

export function offeredModelsOf(env: NodeJS.ProcessEnv): OfferedModels | undefined {
  return byConfiguration.get(env);
}

/** Why the model's provider does not offer it to this gateway, or undefined when it does (or is not known to). */
export function notOffered(model: CatalogModel, env: NodeJS.ProcessEnv): string | undefined {
  const offer = byConfiguration.get(env)?.offer(model);
  return typeof offer === 'string' ? offer : undefined;
}
