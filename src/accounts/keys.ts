import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { NewKey } from '../../commands/account/decide.ts';
import { DEFAULT_KEY_NAME } from '../../events/account.ts';

export const KEY_PREFIX = 'sk-gw-';
const KEY_PATTERN = /^sk-gw-[A-Za-z0-9_-]{43}$/;

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** A new API key: 256 random bits after the `sk-gw-` prefix. Only its hash is kept. */
export function generateKey(): { key: string; record: NewKey } {
  const key = `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  return {
    key,
    record: {
      keyId: `key_${randomBytes(12).toString('hex')}`,
      keyHash: hashKey(key),
      keyPrefix: key.slice(0, 12),
    },
  };
}

export function looksLikeKey(candidate: string): boolean {
  return KEY_PATTERN.test(candidate);
}

/** Compares two hex digests without leaking, through timing, where they first differ. */
export function sameDigest(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** A key's name as it reads: keys issued before keys had names (an account's or sub-account's first) are `default`. */
export const keyNameOf = (name: string | undefined): string => name ?? DEFAULT_KEY_NAME;
