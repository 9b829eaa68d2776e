import { lastUseOfKeys } from '../../projections/requests/queries.ts';
import type { Sql } from '../../projections/types.ts';
import { RequestRefused } from '../contracts/errors.ts';
import type { LiveAccounts, LiveKey } from './live-state.ts';
import type { KeyOwner } from './named-keys.ts';

export interface KeyListing {
  object: 'api_key';
  id: string;
  name: string;
  prefix: string;
  sub_account_id: string | null;
  created_at: number;
  /** The arrival of the key's latest request in the request log; null when it has none. */
  last_used_at: number | null;
  expires_at: number | null;
}

const seconds = (at: Date) => Math.floor(at.getTime() / 1000);

/** The owner of `/v1/sub-accounts/{id}/keys`: the caller's account's sub-account, not deleted; else a 404. */
export function subAccountOwner(live: LiveAccounts, accountId: string, subAccountId: string): KeyOwner {
  const sub = live.subAccount(subAccountId);
  if (!sub || sub.deleted || sub.accountId !== accountId)
    throw new RequestRefused('not_found', `No sub-account ${subAccountId}`);
  return { accountId, subAccountId };
}

/**
 * The owner's keys that are not revoked, oldest first, from the live state; a rotated key is listed until its grace
 * period ends (its replacement is listed beside it), a key past its own expiry until it is revoked. `last_used_at`
 * comes from the request log, so no request writes anything to keep it.
 */
export async function listOwnedKeys(
  live: LiveAccounts,
  sql: Sql,
  owner: KeyOwner,
  now: Date,
): Promise<KeyListing[]> {
  const ended = (key: LiveKey) =>
    key.replacedBy !== null && key.expiresAt !== null && key.expiresAt.getTime() <= now.getTime();
  // In the order they were issued (the live state keeps the log's order).
  const keys = live.keysOf(owner.accountId, owner.subAccountId).filter((key) => !ended(key));
  const used = await lastUseOfKeys(
    sql,
    owner.accountId,
    keys.map((key) => key.keyId),
  );
  return keys.map((key) => {
    const lastUsed = used.get(key.keyId);
    return {
      object: 'api_key',
      id: key.keyId,
      name: key.name,
      prefix: key.keyPrefix,
      sub_account_id: key.subAccountId,
      created_at: seconds(key.createdAt),
      last_used_at: lastUsed ? seconds(lastUsed) : null,
      expires_at: key.expiresAt ? seconds(key.expiresAt) : null,
    };
  });
}
