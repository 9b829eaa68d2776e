import { DEFAULT_BALANCE_LOW_NANOS } from '../../commands/account/state.ts';
import type { AccountEvent } from '../../events/account.ts';
import { categorize } from '../../events/categories.ts';
import type { CredentialEvent } from '../../events/credential.ts';
import type { StoredEvent } from '../../events/envelope.ts';
import { parseEvent } from '../../events/index.ts';
import { type EventStore, START } from '../../events/store.ts';
import type { SubAccountEvent } from '../../events/subaccount.ts';
import { type KeyCheck, type LiveKey, LiveKeys } from './live-keys.ts';
import type { LiveSnapshot, LiveSnapshots } from './live-snapshot.ts';

/**
 * Events folded between two snapshots of the live state (when snapshots are kept), and the least time between
 * two: a start replays at most about this many events past the latest snapshot (about a second at the replay
 * rate measured by `npm run bench:startup`), and a busy log is not snapshotted more than every few seconds.
 */
const SNAPSHOT_EVERY = 10_000;
const SNAPSHOT_MIN_INTERVAL_MS = 10_000;

export type { KeyCheck, KeyHolder, LiveKey } from './live-keys.ts';

export interface LiveAccount {
  accountId: string;
  name: string;
  openedAt: Date;
  rateLimitRpm: number;
  /** Tokens per minute of all its keys and sub-accounts together, capping each sub-account's own; null: none. */
  rateLimitTpm: number | null;
  /** Lifetime top-ups less reversals (refunds); spending lives in the budget streams. */
  toppedUpNanos: bigint;
  balanceLowThresholdNanos: bigint;
  tagBudgets: Map<string, bigint>;
  /** The request log's overrides for this account; null follows the gateway's settings. */
  requestBodies: 'keep' | 'drop' | null;
  requestRetentionDays: number | null;
  /** The models the automatic router may choose for this account; null: any the operator allows. */
  routing: { allowed: string[] | null; excluded: string[] } | null;
  /** Whether the MCP server lists its write tools for this account's keys. */
  mcpWriteTools: boolean;
  /** The response cache's mode for requests that name none (docs/cache.md). */
  cacheDefault: 'auto' | 'force' | 'semantic' | 'skip';
  /** Whether its sub-accounts may register provider keys of their own; and whether a failing own key falls back. */
  byokSubAccounts: boolean;
  byokFallback: boolean;
}

export interface LiveSubAccount {
  subAccountId: string;
  accountId: string;
  name: string;
  externalRef: string | null;
  spendCapNanos: bigint;
  rateLimitRpm: number;
  defaultTag: string | null;
  keyId: string;
  createdAt: Date;
  deleted: boolean;
  /** The reseller's settings (events/subaccount.ts): its markup in hundredths of a percent, and so on. */
  markupBasisPoints: number;
  priceOverrides: { model: string; markupBasisPoints: number }[];
  /** The sub-account stream's revision that last set its price book: what a hold records it was priced by. */
  priceBookRevision: number;
  spendCapReset: 'daily' | 'weekly' | 'monthly' | null;
  rateLimitTpm: number | null;
  allowedModels: string[] | null;
}

/**
 * Keys and balances held in memory for the hot path, fed by a subscription to the log (never by reading the
 * tables per request). A key issued or revoked anywhere — another instance, the CLI — is seen as soon as the
 * subscription delivers its event.
 */
export class LiveAccounts {
  /** Accounts whose request log keeps bodies for other than the gateway's days: account id → days. */
  retentionOverrides(): Record<string, number> {
    const days: Record<string, number> = {};
    for (const account of this.accounts.values()) {
      if (account.requestRetentionDays !== null) days[account.accountId] = account.requestRetentionDays;
    }
    return days;
  }

  private readonly keys: LiveKeys;
  private readonly accounts = new Map<string, LiveAccount>();
  private readonly subAccounts = new Map<string, LiveSubAccount>();
  private readonly controller = new AbortController();
  private following: Promise<void> | undefined;
  private checkpoint = START;
  private last: LiveSnapshot['last'] | undefined;
  private sinceSnapshot = 0;
  private snapshotAt = 0;
  private saving: Promise<void> | undefined;
  private readonly waiters = new Set<() => void>();
  private readonly accountListeners = new Set<() => void>();
  private readonly providerKeyListeners = new Set<(providerKeyId: string, removed: boolean) => void>();
  private readonly credentialListeners = new Set<(event: CredentialEvent) => void>();

  /** With `snapshots`, a start resumes from the latest snapshot and snapshots are taken as the log grows. */
  constructor(
    private readonly store: EventStore,
    private readonly snapshots?: LiveSnapshots,
    /** What a key's expiry is compared with. */
    clock: () => Date = () => new Date(),
  ) {
    this.keys = new LiveKeys(clock);
  }

  /** Replays the log so far (from the latest snapshot, when kept), then keeps following it in the background. */
  async start(onError?: (error: unknown) => void): Promise<void> {
    const snapshot = await this.snapshots?.load().catch((error: unknown) => {
      onError?.(error);
      return undefined;
    });
    if (snapshot) this.restore(snapshot);
    for (;;) {
      const page = await this.store.readAll(this.checkpoint, { maxCount: 1000 });
      if (page.length === 0) break;
      for (const event of page) this.apply(event);
      // A long first replay keeps its progress should the process stop before it ends.
      this.maybeSnapshot(onError);
    }
    this.maybeSnapshot(onError, snapshot ? SNAPSHOT_EVERY : 1, 0);
    this.following = this.follow(onError);
  }

  /** The state after the last event folded, for a later start to resume from. */
  snapshot(): LiveSnapshot | undefined {
    if (!this.last) return undefined;
    return {
      checkpoint: this.checkpoint,
      last: this.last,
      // Copies: the maps' objects change as events are folded while the snapshot is written.
      accounts: [...this.accounts.values()].map((a) => ({ ...a, tagBudgets: new Map(a.tagBudgets) })),
      subAccounts: [...this.subAccounts.values()].map((s) => ({ ...s })),
      keys: this.keys.snapshot(),
    };
  }

  private restore(snapshot: LiveSnapshot): void {
    for (const account of snapshot.accounts) this.accounts.set(account.accountId, account);
    for (const sub of snapshot.subAccounts) this.subAccounts.set(sub.subAccountId, sub);
    this.keys.restore(snapshot.keys);
    this.checkpoint = snapshot.checkpoint;
    this.last = snapshot.last;
  }

  /** Takes a snapshot in the background once `every` events were folded since the last one (and time enough passed). */
  private maybeSnapshot(
    onError: ((error: unknown) => void) | undefined,
    every = SNAPSHOT_EVERY,
    minIntervalMs = SNAPSHOT_MIN_INTERVAL_MS,
  ): void {
    if (!this.snapshots || this.saving || this.sinceSnapshot < every) return;
    if (Date.now() - this.snapshotAt < minIntervalMs) return;
    const snapshot = this.snapshot();
    if (!snapshot) return;
    this.sinceSnapshot = 0;
    this.snapshotAt = Date.now();
    this.saving = this.snapshots
      .save(snapshot)
      .catch((error: unknown) => onError?.(error))
      .finally(() => {
        this.saving = undefined;
      });
  }

  private async follow(onError?: (error: unknown) => void): Promise<void> {
    while (!this.controller.signal.aborted) {
      try {
        for await (const event of this.store.subscribe(this.checkpoint, this.controller.signal)) {
          this.apply(event);
          this.maybeSnapshot(onError);
        }
      } catch (error) {
        if (this.controller.signal.aborted) return;
        onError?.(error);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  private apply(stored: StoredEvent): void {
    this.checkpoint = stored.checkpoint;
    this.last = { stream: stored.stream, revision: stored.revision, id: stored.id };
    this.sinceSnapshot++;
    for (const wake of this.waiters) wake();
    const parsed = parseEvent(stored);
    if (!parsed.ok) return;
    const sorted = categorize(parsed.event);
    switch (sorted.category) {
      case 'account':
        this.applyAccount(stored, sorted.event);
        this.accountsChanged();
        return;
      case 'subaccount':
        this.applySubAccount(stored, sorted.event);
        this.accountsChanged();
        return;
      // Spending is decided in the budget streams' own writers; nothing here depends on it.
      case 'budget':
      case 'job':
      case 'file':
      case 'batch':
      case 'webhook':
      case 'webhooksecret':
      case 'replay':
      case 'eval':
      case 'cache':
      case 'catalog':
      case 'reconciliation':
        return;
      // The operator's credentials added at runtime: their secrets are read by accounts/operator-credentials.ts.
      case 'credential':
        for (const listener of this.credentialListeners) listener(sorted.event);
        return;
      default: {
        const _exhaustive: never = sorted;
        return;
      }
    }
  }

  private applyAccount(stored: StoredEvent, event: AccountEvent): void {
    switch (event.type) {
      case 'AccountOpened':
        this.accounts.set(event.data.accountId, {
          accountId: event.data.accountId,
          name: event.data.name,
          openedAt: stored.occurredAt,
          rateLimitRpm: event.data.rateLimitRpm,
          rateLimitTpm: null,
          toppedUpNanos: 0n,
          balanceLowThresholdNanos: DEFAULT_BALANCE_LOW_NANOS,
          tagBudgets: new Map(),
          requestBodies: null,
          requestRetentionDays: null,
          routing: null,
          mcpWriteTools: false,
          cacheDefault: 'auto',
          byokSubAccounts: false,
          byokFallback: false,
        });
        return;
      case 'ApiKeyIssued':
        this.keys.add(stored.occurredAt, { ...event.data, subAccountId: null });
        return;
      case 'ApiKeyRevoked':
        this.keys.revoke(event.data.keyId);
        return;
      case 'ApiKeyRotated':
        this.keys.rotated(event.data);
        return;
      case 'AccountToppedUp': {
        // The store holds each top-up once (its id derives from the reference) and delivers each event once.
        const account = this.accounts.get(event.data.accountId);
        if (account) account.toppedUpNanos += BigInt(event.data.amountNanos);
        return;
      }
      case 'AccountTopUpReversed': {
        const account = this.accounts.get(event.data.accountId);
        if (account) account.toppedUpNanos -= BigInt(event.data.amountNanos);
        return;
      }
      case 'AccountSettingsChanged': {
        const account = this.accounts.get(event.data.accountId);
        if (!account) return;
        if (event.data.rateLimitRpm !== undefined) account.rateLimitRpm = event.data.rateLimitRpm;
        if (event.data.rateLimitTpm !== undefined) account.rateLimitTpm = event.data.rateLimitTpm;
        if (event.data.balanceLowThresholdNanos !== undefined) {
          account.balanceLowThresholdNanos = BigInt(event.data.balanceLowThresholdNanos);
        }
        if (event.data.requestBodies !== undefined) account.requestBodies = event.data.requestBodies;
        if (event.data.routing !== undefined) account.routing = event.data.routing;
        if (event.data.requestRetentionDays !== undefined) {
          account.requestRetentionDays = event.data.requestRetentionDays;
        }
        if (event.data.mcpWriteTools !== undefined) account.mcpWriteTools = event.data.mcpWriteTools;
        if (event.data.cacheDefault !== undefined) account.cacheDefault = event.data.cacheDefault;
        if (event.data.byokSubAccounts !== undefined) account.byokSubAccounts = event.data.byokSubAccounts;
        if (event.data.byokFallback !== undefined) account.byokFallback = event.data.byokFallback;
        return;
      }
      case 'TagBudgetSet':
        this.accounts.get(event.data.accountId)?.tagBudgets.set(event.data.tag, BigInt(event.data.capNanos));
        return;
      case 'TagBudgetRemoved':
        this.accounts.get(event.data.accountId)?.tagBudgets.delete(event.data.tag);
        return;
      case 'DailyUsageSummarized':
      case 'WebhookEndpointSet':
        return;
      // The secrets are not in the log: the provider keys' own index (accounts/provider-keys.ts) reads them.
      case 'ProviderKeyRegistered':
      case 'ProviderKeyRemoved':
        for (const listener of this.providerKeyListeners)
          listener(event.data.providerKeyId, event.type === 'ProviderKeyRemoved');
        return;
      default: {
        const _exhaustive: never = event;
        return;
      }
    }
  }

  private applySubAccount(stored: StoredEvent, event: SubAccountEvent): void {
    switch (event.type) {
      case 'SubAccountCreated': {
        const data = event.data;
        this.subAccounts.set(data.subAccountId, {
          subAccountId: data.subAccountId,
          accountId: data.accountId,
          name: data.name,
          externalRef: data.externalRef,
          spendCapNanos: BigInt(data.spendCapNanos),
          rateLimitRpm: data.rateLimitRpm,
          defaultTag: data.defaultTag,
          keyId: data.keyId,
          createdAt: stored.occurredAt,
          deleted: false,
          markupBasisPoints: data.markupBasisPoints ?? 0,
          priceOverrides: data.priceOverrides ?? [],
          priceBookRevision: stored.revision,
          spendCapReset: data.spendCapReset ?? null,
          rateLimitTpm: data.rateLimitTpm ?? null,
          allowedModels: data.allowedModels ?? null,
        });
        this.keys.add(stored.occurredAt, { ...data, name: undefined, subAccountId: data.subAccountId });
        return;
      }
      case 'SubAccountUpdated': {
        const sub = this.subAccounts.get(event.data.subAccountId);
        if (!sub) return;
        const { name, externalRef, spendCapNanos, rateLimitRpm, defaultTag } = event.data;
        if (name !== undefined) sub.name = name;
        if (externalRef !== undefined) sub.externalRef = externalRef;
        if (spendCapNanos !== undefined) sub.spendCapNanos = BigInt(spendCapNanos);
        if (rateLimitRpm !== undefined) sub.rateLimitRpm = rateLimitRpm;
        if (defaultTag !== undefined) sub.defaultTag = defaultTag;
        const { markupBasisPoints, priceOverrides, spendCapReset, rateLimitTpm, allowedModels } = event.data;
        if (markupBasisPoints !== undefined) sub.markupBasisPoints = markupBasisPoints;
        if (priceOverrides !== undefined) sub.priceOverrides = priceOverrides;
        if (markupBasisPoints !== undefined || priceOverrides !== undefined)
          sub.priceBookRevision = stored.revision;
        if (spendCapReset !== undefined) sub.spendCapReset = spendCapReset;
        if (rateLimitTpm !== undefined) sub.rateLimitTpm = rateLimitTpm;
        if (allowedModels !== undefined) sub.allowedModels = allowedModels;
        return;
      }
      case 'SubAccountDeleted': {
        const sub = this.subAccounts.get(event.data.subAccountId);
        if (sub) sub.deleted = true;
        this.keys.revoke(event.data.keyId);
        this.keys.revokeOwnedBy(event.data.subAccountId);
        return;
      }
      case 'SubAccountKeyIssued':
        this.keys.add(stored.occurredAt, event.data);
        return;
      case 'SubAccountKeyRevoked':
        this.keys.revoke(event.data.keyId);
        return;
      case 'SubAccountKeyRotated':
        this.keys.rotated(event.data);
        return;
      default: {
        const _exhaustive: never = event;
        return;
      }
    }
  }

  /** Called after a key is issued, revoked or rotated (the instance then reports how far it has read). */
  onKeysChanged(listener: () => void): () => void {
    return this.keys.onChange(listener);
  }

  /** Calls `listener` after each account or sub-account event is applied: keys, limits, caps, price books. */
  onAccountsChanged(listener: () => void): () => void {
    this.accountListeners.add(listener);
    return () => this.accountListeners.delete(listener);
  }

  /** Calls `listener` with the id of each provider key registered or removed, as the log delivers it. */
  onProviderKeyChanged(listener: (providerKeyId: string, removed: boolean) => void): () => void {
    this.providerKeyListeners.add(listener);
    return () => this.providerKeyListeners.delete(listener);
  }

  /** Calls `listener` with each event of a provider's `credential-` stream, as the log delivers it. */
  onCredentialEvent(listener: (event: CredentialEvent) => void): () => void {
    this.credentialListeners.add(listener);
    return () => this.credentialListeners.delete(listener);
  }

  private accountsChanged(): void {
    for (const listener of this.accountListeners) listener();
  }

  /** The keys of an account (its main keys: `subAccountId` null) or of one sub-account that are not revoked, in the log's order. */
  keysOf(accountId: string, subAccountId: string | null): LiveKey[] {
    return this.keys.ownedBy(accountId, subAccountId);
  }

  /** A key by id, revoked or not (its owner is checked by the caller). */
  key(keyId: string): LiveKey | undefined {
    return this.keys.byKeyId(keyId);
  }

  subAccount(subAccountId: string): LiveSubAccount | undefined {
    return this.subAccounts.get(subAccountId);
  }

  /** The account's sub-accounts that are not deleted, oldest first. */
  subAccountsOf(accountId: string): LiveSubAccount[] {
    return [...this.subAccounts.values()].filter((s) => s.accountId === accountId && !s.deleted);
  }

  accountIds(): string[] {
    return [...this.accounts.keys()];
  }

  /** The live key's holder, or undefined for an unknown, revoked or expired key. */
  authenticate(key: string): LiveKey | undefined {
    const checked = this.keys.check(key);
    return checked && 'holder' in checked ? checked.holder : undefined;
  }

  /** The key's holder; or, for a key that expired (by its own expiry or a rotation's grace), when; else undefined. */
  check(key: string): KeyCheck {
    return this.keys.check(key);
  }

  /** An active key by id (a dashboard session names its key by id, never holds the key). */
  holder(keyId: string): LiveKey | undefined {
    return this.keys.active(keyId);
  }

  keyOwner(keyId: string): string | undefined {
    return this.keys.byKeyId(keyId)?.accountId;
  }

  account(accountId: string): LiveAccount | undefined {
    return this.accounts.get(accountId);
  }

  /**
   * Resolves once the event at `checkpoint` has been applied (read-your-writes for the admin API: a key it
   * returns works at once). Gives up quietly after `timeoutMs`; the state catches up regardless.
   */
  async waitFor(checkpoint: string, timeoutMs = 2000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.store.compareCheckpoints(this.checkpoint, checkpoint) < 0 && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, Math.max(1, deadline - Date.now()));
        this.waiters.add(wake);
      });
    }
  }

  /** The checkpoint of the last event applied. */
  position(): string {
    return this.checkpoint;
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await this.following;
    await this.saving;
  }
}
