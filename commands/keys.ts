import { DEFAULT_KEY_NAME } from '../events/account.ts';
import { DomainError } from './errors.ts';

/** What the account's and the sub-accounts' deciders know of one of their keys. */
export interface KeyState {
  revoked: boolean;
  name: string;
  /** ISO time; null: never. */
  expiresAt: string | null;
}

/** A new key's name and expiry, as its issuer gave them (checked by the caller, which knows the clock). */
export interface KeyTerms {
  name?: string;
  expiresAt?: string | null;
}

/** A rotation, decided from the key's state: `now` and the grace's end arrive in the command. */
export interface Rotation {
  keyId: string;
  now: string;
  graceEndsAt: string;
  /** The new key's expiry; undefined: the old key's. */
  expiresAt?: string | null;
}

export function keyName(name: string | undefined): string {
  if (name === undefined) return DEFAULT_KEY_NAME;
  if (name.trim() === '') throw new DomainError('invalid', 'name must not be empty', 'name');
  return name;
}

export const keyExpired = (key: Pick<KeyState, 'expiresAt'>, now: string): boolean =>
  key.expiresAt !== null && Date.parse(key.expiresAt) <= Date.parse(now);

/**
 * The replacement takes the old key's name (and, unless one is given, its expiry); the old key ends when the grace
 * ends, or at its own expiry when that comes first. A revoked key is not found; an expired one cannot be rotated
 * (nothing is left to hand over: a new key is what it needs).
 */
export function rotate(
  key: KeyState | undefined,
  rotation: Rotation,
): { name: string; expiresAt: string | null; oldEndsAt: string } {
  if (!key || key.revoked) throw new DomainError('not_found', `key ${rotation.keyId} not found`, 'key_id');
  if (keyExpired(key, rotation.now)) {
    throw new DomainError(
      'conflict',
      `key ${rotation.keyId} expired at ${key.expiresAt}: create a new key instead`,
      'key_id',
    );
  }
  const oldEndsAt =
    key.expiresAt !== null && Date.parse(key.expiresAt) < Date.parse(rotation.graceEndsAt)
      ? key.expiresAt
      : rotation.graceEndsAt;
  return {
    name: key.name,
    expiresAt: rotation.expiresAt !== undefined ? rotation.expiresAt : key.expiresAt,
    oldEndsAt,
  };
}
