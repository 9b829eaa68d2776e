import { hashKey, keyNameOf, sameDigest } from './keys.ts';

export interface KeyHolder {
  keyId: string;
  accountId: string;
  keyHash: string;
  /** Set for a sub-account's scoped key. */
  subAccountId: string | null;
  /** Its owner's name for it (the request log records it); absent where the gateway acts for a key it names by id. */
  name?: string;
}

/** A key as the live state holds it: what authenticates, and what its owner lists. */
export interface LiveKey extends KeyHolder {
  name: string;
  keyPrefix: string;
  createdAt: Date;
  /** When it stops authenticating; null: never. */
  expiresAt: Date | null;
  /** The key that replaced it in a rotation. */
  replacedBy: string | null;
}

/** A key issued, as the events give it (`ApiKeyIssued`, `SubAccountCreated`'s first key, `SubAccountKeyIssued`). */
export interface IssuedKey {
  keyId: string;
  accountId: string;
  keyHash: string;
  keyPrefix: string;
  subAccountId: string | null;
  name?: string | undefined;
  expiresAt?: string | null | undefined;
}

/** Why a presented key does not authenticate, when it is known: it expired (its own expiry, or a rotation's). */
export type KeyCheck = { holder: LiveKey } | { expiredAt: Date } | undefined;

/**
 * The keys of the live state: by hash (what authenticates; a revoked key leaves it), by id (every key, for its
 * owner) and by owner (the account's main keys, each sub-account's), in the order they were issued.
 */
export class LiveKeys {
  private readonly byHash = new Map<string, LiveKey>();
  private readonly byId = new Map<string, LiveKey>();
  private readonly byOwner = new Map<string, Set<string>>();
  private readonly listeners = new Set<() => void>();

  /** `clock`: what an expiry is compared with. */
  constructor(private readonly clock: () => Date) {}

  add(issuedAt: Date, key: IssuedKey): void {
    const holder: LiveKey = {
      keyId: key.keyId,
      accountId: key.accountId,
      keyHash: key.keyHash,
      subAccountId: key.subAccountId,
      name: keyNameOf(key.name),
      keyPrefix: key.keyPrefix,
      createdAt: issuedAt,
      expiresAt: key.expiresAt ? new Date(key.expiresAt) : null,
      replacedBy: null,
    };
    this.byId.set(holder.keyId, holder);
    this.index(holder);
    this.changed();
  }

  revoke(keyId: string): void {
    const holder = this.byId.get(keyId);
    if (!holder) return;
    this.byHash.delete(holder.keyHash);
    this.byOwner.get(holder.subAccountId ?? holder.accountId)?.delete(keyId);
    this.changed();
  }

  /** Every key of a deleted sub-account. */
  revokeOwnedBy(subAccountId: string): void {
    for (const keyId of [...(this.byOwner.get(subAccountId) ?? [])]) this.revoke(keyId);
  }

  rotated(rotation: { keyId: string; replacedBy: string; expiresAt: string }): void {
    const holder = this.byId.get(rotation.keyId);
    if (!holder) return;
    holder.expiresAt = new Date(rotation.expiresAt);
    holder.replacedBy = rotation.replacedBy;
    this.changed();
  }

  /** Called after a key is issued, revoked or rotated (the instance then reports how far it has read). */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The key's holder; or, for a key that expired (by its own expiry or a rotation's grace), when; else undefined. */
  check(key: string): KeyCheck {
    const digest = hashKey(key);
    const holder = this.byHash.get(digest);
    if (!holder || !sameDigest(holder.keyHash, digest)) return undefined;
    // Expiry is a time, so every instance refuses the key at the same moment with no event of its own.
    if (this.expired(holder)) return { expiredAt: holder.expiresAt as Date };
    return { holder };
  }

  /** An active key by id: neither revoked nor expired. */
  active(keyId: string): LiveKey | undefined {
    const holder = this.byId.get(keyId);
    if (!holder || this.byHash.get(holder.keyHash) !== holder) return undefined;
    return this.expired(holder) ? undefined : holder;
  }

  /** A key by id, revoked or not (its owner is checked by the caller). */
  byKeyId(keyId: string): LiveKey | undefined {
    return this.byId.get(keyId);
  }

  /** The keys of an account (its main keys: `subAccountId` null) or of one sub-account that are not revoked, in the log's order. */
  ownedBy(accountId: string, subAccountId: string | null): LiveKey[] {
    const ids = this.byOwner.get(subAccountId ?? accountId) ?? [];
    return [...ids]
      .map((id) => this.byId.get(id))
      .filter((key): key is LiveKey => key !== undefined && key.accountId === accountId);
  }

  /** Copies of every key, in the order issued, `revoked` ones out of the hash index. */
  snapshot(): (LiveKey & { revoked: boolean })[] {
    return [...this.byId.values()].map((k) => ({ ...k, revoked: this.byHash.get(k.keyHash) !== k }));
  }

  restore(keys: (LiveKey & { revoked: boolean })[]): void {
    for (const { revoked, ...holder } of keys) {
      this.byId.set(holder.keyId, holder);
      if (!revoked) this.index(holder);
    }
  }

  private expired(holder: LiveKey): boolean {
    return holder.expiresAt !== null && holder.expiresAt.getTime() <= this.clock().getTime();
  }

  private index(holder: LiveKey): void {
    this.byHash.set(holder.keyHash, holder);
    const owner = holder.subAccountId ?? holder.accountId;
    this.byOwner.set(owner, (this.byOwner.get(owner) ?? new Set<string>()).add(holder.keyId));
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}
