import type { StoredEvent } from '../../events/envelope.ts';
import { parseEvent } from '../../events/index.ts';
import { type EventStore, START } from '../../events/store.ts';
import { hashKey, sameDigest } from './keys.ts';

export interface KeyHolder {
  keyId: string;
  accountId: string;
  keyHash: string;
}

export interface LiveAccount {
  accountId: string;
  name: string;
  rateLimitRpm: number;
  balanceNanos: bigint;
}

/**
 * Keys and balances held in memory for the hot path, fed by a subscription to the log (never by reading the
 * tables per request). A key issued or revoked anywhere — another instance, the CLI — is seen as soon as the
 * subscription delivers its event.
 */
export class LiveAccounts {
  private readonly keysByHash = new Map<string, KeyHolder>();
  private readonly keysById = new Map<string, KeyHolder>();
  private readonly accounts = new Map<string, LiveAccount>();
  private readonly controller = new AbortController();
  private following: Promise<void> | undefined;
  private checkpoint = START;
  private readonly waiters = new Set<() => void>();

  constructor(private readonly store: EventStore) {}

  /** Replays the log so far, then keeps following it in the background. */
  async start(onError?: (error: unknown) => void): Promise<void> {
    for (;;) {
      const page = await this.store.readAll(this.checkpoint, { maxCount: 1000 });
      if (page.length === 0) break;
      for (const event of page) this.apply(event);
    }
    this.following = this.follow(onError);
  }

  private async follow(onError?: (error: unknown) => void): Promise<void> {
    while (!this.controller.signal.aborted) {
      try {
        for await (const event of this.store.subscribe(this.checkpoint, this.controller.signal))
          this.apply(event);
      } catch (error) {
        if (this.controller.signal.aborted) return;
        onError?.(error);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  private apply(stored: StoredEvent): void {
    this.checkpoint = stored.checkpoint;
    for (const wake of this.waiters) wake();
    const parsed = parseEvent(stored);
    if (!parsed.ok) return;
    const event = parsed.event;
    switch (event.type) {
      case 'AccountOpened':
        this.accounts.set(event.data.accountId, {
          accountId: event.data.accountId,
          name: event.data.name,
          rateLimitRpm: event.data.rateLimitRpm,
          balanceNanos: this.accounts.get(event.data.accountId)?.balanceNanos ?? 0n,
        });
        return;
      case 'ApiKeyIssued': {
        const holder = {
          keyId: event.data.keyId,
          accountId: event.data.accountId,
          keyHash: event.data.keyHash,
        };
        this.keysByHash.set(holder.keyHash, holder);
        this.keysById.set(holder.keyId, holder);
        return;
      }
      case 'ApiKeyRevoked': {
        const holder = this.keysById.get(event.data.keyId);
        if (holder) this.keysByHash.delete(holder.keyHash);
        return;
      }
      case 'AccountToppedUp': {
        // The store holds each top-up once (its id derives from the reference) and delivers each event once.
        const account = this.accounts.get(event.data.accountId);
        if (!account) return;
        account.balanceNanos += BigInt(event.data.amountNanos);
        return;
      }
      default: {
        const _exhaustive: never = event;
        return;
      }
    }
  }

  /** The live key's holder, or undefined for an unknown or revoked key. */
  authenticate(key: string): KeyHolder | undefined {
    const digest = hashKey(key);
    const holder = this.keysByHash.get(digest);
    return holder && sameDigest(holder.keyHash, digest) ? holder : undefined;
  }

  keyOwner(keyId: string): string | undefined {
    return this.keysById.get(keyId)?.accountId;
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
  }
}
