import { randomUUID } from 'node:crypto';
import { cacheStream } from '../../events/cache.ts';
import { toNewEvent } from '../../events/index.ts';
import type { EventStore } from '../../events/store.ts';
import type { KeyHolder } from '../accounts/live-state.ts';
import type { Charge } from '../contracts/money.ts';
import type { CacheEmbedder } from './embedder.ts';
import type { CachedAnswer, CacheEntry, CacheStore } from './entry.ts';
import { canonicalJson, exactKey, scopeOf, sha256 } from './key.ts';
import { type CacheMode, type CachePolicy, MODE_DESCRIPTIONS, modeFor } from './mode.ts';
import { ScopeIndex, signatureOf } from './vector-index.ts';

export interface CacheSettings {
  ttlMs: number;
  /** The similarity a semantic hit needs at least (a request may raise it, never lower it). */
  threshold: number;
  /** The account's `cache_default`: the mode of its requests that name none (live state; `auto` when unset). */
  accountDefault?: (accountId: string) => CacheMode | undefined;
}

/** A semantic lookup's question: the group of requests it may be answered from, and the user message. */
export interface SemanticQuestion {
  group: Record<string, unknown>;
  text: string;
}

/** What a request asks of the cache. */
export interface CacheAsk {
  policy: CachePolicy;
  /** The exact key's parts (keyParts): the resolved model and everything that shapes the answer. */
  parts: Record<string, unknown>;
  /**
   * Present for a single-turn request: what a semantic lookup compares, and what a stored entry is embedded as
   * so that a later semantic lookup finds it whichever mode stored it.
   */
  semantic?: SemanticQuestion;
  threshold: number;
}

export interface CacheHit {
  entry: CacheEntry;
  type: 'exact' | 'semantic';
  similarity: number | null;
}

/** What a lookup found, and what a store after a miss needs. */
export interface Probe {
  auth: KeyHolder;
  policy: CachePolicy;
  scope: string;
  /** The exact key; empty when the policy neither looks up nor stores. */
  key: string;
  status: string;
  /** RFC 9211's Cache-Status. */
  cacheStatus: string;
  hit?: CacheHit;
  semantic?: { group: string; vector: Float32Array };
  embeddingCostNanos: bigint | null;
}

/** The most tenants whose semantic index one process keeps in memory; others are read again when asked. */
const MAX_INDEXES = 256;
const SWEEP_MS = 10 * 60 * 1000;

/**
 * The response cache: exact and semantic entries per tenant, looked up before the pipeline and stored after it.
 * Every failure of the cache's own store is reported and answered as a miss: the cache never fails a request.
 */
export class ResponseCache {
  private readonly indexes = new Map<string, ScopeIndex>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly store: CacheStore,
    readonly settings: CacheSettings,
    private readonly events: EventStore,
    readonly embedder: CacheEmbedder | undefined,
    private readonly report: (message: string, error: unknown) => void,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.sweeper = setInterval(() => {
      this.store
        .sweep(this.clock().getTime())
        .catch((error) => this.report('sweeping expired cache entries failed', error));
    }, SWEEP_MS);
    this.sweeper.unref();
  }

  /** The mode a request runs in: its own `cache` field, else its account's `cache_default`, else `auto`. */
  modeFor(auth: KeyHolder, requested: CacheMode | undefined): CacheMode {
    return modeFor(this.settings, auth.accountId, requested);
  }

  /** Whether a lookup would embed this request's prompt: a semantic one, or one that stores with an embedder. */
  embeds(policy: CachePolicy): boolean {
    return policy.semantic || (policy.store && this.embedder !== undefined);
  }

  async lookup(auth: KeyHolder, ask: CacheAsk, signal: AbortSignal): Promise<Probe> {
    const scope = scopeOf(auth);
    // Hashing the key is most of a skipped lookup's cost, and only a lookup or a store reads it.
    const key = ask.policy.exact || ask.policy.store ? exactKey(ask.parts) : '';
    const probe: Probe = {
      auth,
      policy: ask.policy,
      scope,
      key,
      status: 'skip',
      cacheStatus: 'gateway; fwd=bypass',
      embeddingCostNanos: null,
    };
    if (!ask.policy.exact) return probe;
    try {
      const now = this.clock().getTime();
      const exact = await this.store.get(scope, key, now);
      if (exact) return this.hitProbe(probe, { entry: exact, type: 'exact', similarity: null });
      probe.status = 'miss';
      probe.cacheStatus = 'gateway; fwd=uri-miss';
      if (ask.policy.semantic && !this.embedder) probe.status = 'miss; semantic=unavailable';
      else if (ask.policy.semantic && !ask.semantic) probe.status = 'miss; semantic=ineligible';
      // Every single-turn entry is embedded when stored, whichever mode stores it, so that a semantic lookup
      // finds it; the vector is taken here, on the miss, so that its cost is on this request's record.
      if (!this.embedder || !ask.semantic || !(ask.policy.semantic || ask.policy.store)) return probe;
      const embedded = await this.embedder.embed(ask.semantic.text, signal);
      probe.embeddingCostNanos = embedded.costNanos;
      const group = sha256(canonicalJson(ask.semantic.group));
      probe.semantic = { group, vector: embedded.vector };
      if (!ask.policy.semantic) return probe;
      const index = await this.indexOf(scope, auth.accountId, now);
      for (const found of index.search(group, embedded.vector, ask.threshold, now).slice(0, 3)) {
        const entry = await this.store.get(scope, found.key, now);
        if (entry) return this.hitProbe(probe, { entry, type: 'semantic', similarity: found.similarity });
      }
    } catch (error) {
      if (signal.aborted) throw error;
      this.report('a cache lookup failed; answering as a miss', error);
    }
    return probe;
  }

  private hitProbe(probe: Probe, hit: CacheHit): Probe {
    const ttl = Math.max(0, Math.floor((Date.parse(hit.entry.expiresAt) - this.clock().getTime()) / 1000));
    probe.hit = hit;
    probe.status =
      hit.type === 'exact'
        ? 'hit; type=exact'
        : `hit; type=semantic; similarity=${(Math.floor((hit.similarity ?? 0) * 1000) / 1000).toFixed(3)}`;
    probe.cacheStatus = `gateway; hit; ttl=${ttl}; detail=${hit.type}`;
    return probe;
  }

  /** The tenant's semantic index, brought up to date with what every instance stored (and purged) since. */
  private async indexOf(scope: string, accountId: string, now: number): Promise<ScopeIndex> {
    let index = this.indexes.get(scope);
    if (index) this.indexes.delete(scope);
    else index = new ScopeIndex();
    this.indexes.set(scope, index);
    if (this.indexes.size > MAX_INDEXES) {
      const oldest = this.indexes.keys().next().value;
      if (oldest !== undefined) this.indexes.delete(oldest);
    }
    const generation = await this.store.generation(accountId);
    if (generation !== index.generation) index.reset(generation);
    index.add(await this.store.vectorsSince(scope, index.seq, now));
    return index;
  }

  /**
   * Keeps an answer the pipeline served, when the request's mode stores and the charge is one a hit can be billed
   * from (undiscounted: a batch line's answer is not a price to halve again). What is not storable (an error, a tool call, a cut answer) never reaches
   * here: the features decide that. Never fails the request.
   */
  async save(
    probe: Probe,
    served: {
      model: string;
      provider: string;
      requestId: string;
      charge: Charge | undefined;
      usageReported: boolean;
      units: number;
      answer: CachedAnswer;
    },
  ): Promise<void> {
    const { charge } = served;
    if (!probe.policy.store || probe.hit || !charge) return;
    // An answer served on the requester's own key is stored too: its lines are the provider's, as any answer's.
    if (charge.discount !== 'none' && charge.discount !== 'byok') return;
    const now = this.clock();
    const entry: CacheEntry = {
      id: `ce_${randomUUID().replaceAll('-', '')}`,
      scope: probe.scope,
      accountId: probe.auth.accountId,
      key: probe.key,
      model: served.model,
      provider: served.provider,
      sourceRequestId: served.requestId,
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + this.settings.ttlMs).toISOString(),
      charge: {
        lines: charge.lines.map((l) => ({
          ...l,
          unitPriceNanosPerMillion: l.unitPriceNanosPerMillion.toString(),
        })),
        discount: charge.discount,
        chargedNanos: charge.chargedNanos.toString(),
        usageReported: served.usageReported,
        units: served.units,
      },
      answer: served.answer,
    };
    try {
      await this.store.put(entry, now.getTime());
      if (probe.semantic) {
        await this.store.addVector(
          probe.scope,
          probe.auth.accountId,
          {
            group: probe.semantic.group,
            key: probe.key,
            vector: probe.semantic.vector,
            signs: signatureOf(probe.semantic.vector),
            expiresAtMs: Date.parse(entry.expiresAt),
          },
          now.getTime(),
        );
      }
    } catch (error) {
      this.report('storing a cache entry failed', error);
    }
  }

  /**
   * Drops the caller's entries: an account's key its own and its sub-accounts', a sub-account's key its own. The
   * purge is recorded as an event; other instances see it at their next lookup (the store is shared).
   */
  async purge(auth: KeyHolder, requestId: string): Promise<number> {
    const entries = await this.store.purge(auth.accountId, auth.subAccountId);
    for (const scope of this.indexes.keys()) {
      if (scope === scopeOf(auth) || (auth.subAccountId === null && scope.startsWith(`${auth.accountId}/`)))
        this.indexes.delete(scope);
    }
    const event = {
      type: 'CachePurged' as const,
      data: {
        accountId: auth.accountId,
        subAccountId: auth.subAccountId,
        keyId: auth.keyId,
        requestId,
        entries,
      },
    };
    await this.events.append(
      cacheStream(auth.accountId),
      [toNewEvent(event, randomUUID(), { now: this.clock() })],
      'any',
    );
    return entries;
  }

  /** What `/v1/capabilities` says of the cache on this gateway. */
  describe() {
    return {
      modes: MODE_DESCRIPTIONS,
      default_mode: 'auto' as const,
      ttl_seconds: Math.round(this.settings.ttlMs / 1000),
      discount_percent: 50,
      semantic: {
        available: this.embedder !== undefined,
        embedding_model: this.embedder?.model.id ?? null,
        threshold: this.settings.threshold,
      },
    };
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await this.store.close();
  }
}
