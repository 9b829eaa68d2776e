import { AccountCommands } from '../../commands/account/handler.ts';
import { DomainError } from '../../commands/errors.ts';
import type { KeyTerms, Rotation } from '../../commands/keys.ts';
import { SubAccountCommands } from '../../commands/subaccount/handler.ts';
import type { AccountEvent } from '../../events/account.ts';
import type { EventStore } from '../../events/store.ts';
import type { SubAccountEvent } from '../../events/subaccount.ts';
import { generateKey, keyNameOf } from './keys.ts';

/** Whose keys: an account's main keys (`subAccountId` null) or one sub-account's. */
export interface KeyOwner {
  accountId: string;
  subAccountId: string | null;
}

/** The key as its creation (or rotation) answers it: the only time the key itself is shown. */
export interface IssuedKey {
  object: 'api_key';
  id: string;
  name: string;
  key: string;
  prefix: string;
  sub_account_id: string | null;
  created_at: number;
  expires_at: number | null;
}

/** Who answers a key's owner by its id: the live state in a gateway, the `api_keys` read model in the CLI. */
export type KeyOwnerOf = (keyId: string) => Promise<KeyOwner | undefined>;

/** The latest expiry a key may be given: the last second of year 9999, as ISO times can write it. */
const LAST_EXPIRY_SECONDS = 253_402_300_799;
export const MAX_NAME = 100;
/** The longest a rotated key may keep working beside its replacement. */
export const MAX_GRACE_SECONDS = 30 * 24 * 3600;

const seconds = (at: Date) => Math.floor(at.getTime() / 1000);
/** A DomainError, so that the CLI working on the store reports it as the API does (`param` from the quoted field). */
const invalid = (field: string, why: string) => new DomainError('invalid', `'${field}': ${why}`, field);

/**
 * Named keys of an account and of its sub-accounts: issued, revoked and rotated as events on the owner's stream
 * (`ApiKey*` on the account's, `SubAccountKey*` on the sub-account's). Every key of an owner spends under the same
 * caps, limits and usage, which are the owner's. `afterWrite` returns once the change is in force: in a gateway,
 * once every running instance has applied it.
 */
export class NamedKeys {
  private readonly accounts: AccountCommands;
  private readonly subAccounts: SubAccountCommands;

  constructor(
    store: EventStore,
    private readonly ownerOf: KeyOwnerOf,
    private readonly afterWrite: (checkpoint: string) => Promise<void> = async () => {},
    /** The gateway's clock: what expiries and grace periods are counted from. */
    readonly clock: () => Date = () => new Date(),
  ) {
    this.accounts = new AccountCommands(store);
    this.subAccounts = new SubAccountCommands(store);
  }

  /** `expiresAt` in Unix seconds, checked against the gateway's clock. */
  async issue(
    owner: KeyOwner,
    terms: { name?: string; expiresAt?: number | null },
    correlationId?: string,
  ): Promise<IssuedKey> {
    const now = this.clock();
    const expiresAt = this.expiry(terms.expiresAt, now, 'expires_at');
    const generated = generateKey();
    const { record } = generated;
    const given: KeyTerms = { name: this.name(terms.name), expiresAt: expiresAt?.toISOString() ?? null };
    const decision = owner.subAccountId
      ? await this.subAccounts.handle(
          owner.subAccountId,
          { type: 'IssueSubAccountKey', accountId: owner.accountId, key: record, ...given },
          { now, correlationId },
        )
      : await this.accounts.handle(
          owner.accountId,
          { type: 'IssueKey', key: record, ...given },
          { now, correlationId },
        );
    if (decision.checkpoint) await this.afterWrite(decision.checkpoint);
    return issuedKey(owner, generated, decision.events, now);
  }

  /** Revoking a revoked key changes nothing and answers the same; another owner's key is not found. */
  async revoke(owner: KeyOwner, keyId: string, correlationId?: string) {
    const context = { now: this.clock(), correlationId };
    const decision = owner.subAccountId
      ? await this.subAccounts.handle(
          owner.subAccountId,
          { type: 'RevokeSubAccountKey', accountId: owner.accountId, keyId },
          context,
        )
      : await this.accounts.handle(owner.accountId, { type: 'RevokeKey', keyId }, context);
    if (decision.checkpoint) await this.afterWrite(decision.checkpoint);
    return {
      object: 'api_key' as const,
      id: keyId,
      sub_account_id: owner.subAccountId,
      deleted: true as const,
    };
  }

  /** A new key in place of `keyId` (its name, and its expiry unless `expiresAt` is given); the old one ends after the grace. */
  async rotate(
    owner: KeyOwner,
    keyId: string,
    terms: { graceSeconds: number; expiresAt?: number | null },
    correlationId?: string,
  ): Promise<IssuedKey & { replaces: string; replaced_key_expires_at: number }> {
    if (
      !Number.isSafeInteger(terms.graceSeconds) ||
      terms.graceSeconds < 0 ||
      terms.graceSeconds > MAX_GRACE_SECONDS
    )
      throw invalid('grace_seconds', `an integer from 0 to ${MAX_GRACE_SECONDS} (30 days)`);
    const now = this.clock();
    const expiresAt = this.expiry(terms.expiresAt, now, 'expires_at');
    const generated = generateKey();
    const { record } = generated;
    const rotation: Rotation = {
      keyId,
      now: now.toISOString(),
      graceEndsAt: new Date(now.getTime() + terms.graceSeconds * 1000).toISOString(),
      ...(terms.expiresAt !== undefined && { expiresAt: expiresAt?.toISOString() ?? null }),
    };
    const context = { now, correlationId };
    const decision = owner.subAccountId
      ? await this.subAccounts.handle(
          owner.subAccountId,
          { type: 'RotateSubAccountKey', accountId: owner.accountId, key: record, ...rotation },
          context,
        )
      : await this.accounts.handle(owner.accountId, { type: 'RotateKey', key: record, ...rotation }, context);
    if (decision.checkpoint) await this.afterWrite(decision.checkpoint);
    const replacedUntil = decision.events.flatMap((e) =>
      e.type === 'ApiKeyRotated' || e.type === 'SubAccountKeyRotated' ? [e.data.expiresAt] : [],
    )[0];
    if (replacedUntil === undefined) throw new Error('a rotation decided no ApiKeyRotated');
    return {
      ...issuedKey(owner, generated, decision.events, now),
      replaces: keyId,
      // Rounded up: the first whole second at which the old key no longer works.
      replaced_key_expires_at: Math.ceil(Date.parse(replacedUntil) / 1000),
    };
  }

  /** The operator's revocation, of any key by its id. */
  async revokeById(keyId: string, correlationId?: string) {
    const owner = await this.owner(keyId);
    await this.revoke(owner, keyId, correlationId);
    return {
      key_id: keyId,
      account_id: owner.accountId,
      sub_account_id: owner.subAccountId,
      revoked: true as const,
    };
  }

  /** The operator's rotation, of any key by its id. */
  async rotateById(
    keyId: string,
    terms: { graceSeconds: number; expiresAt?: number | null },
    correlationId?: string,
  ) {
    const owner = await this.owner(keyId);
    return { account_id: owner.accountId, ...(await this.rotate(owner, keyId, terms, correlationId)) };
  }

  private async owner(keyId: string): Promise<KeyOwner> {
    const owner = await this.ownerOf(keyId);
    if (!owner) throw new DomainError('not_found', `key ${keyId} not found`, 'key_id');
    return { accountId: owner.accountId, subAccountId: owner.subAccountId };
  }

  /** Trimmed, 1 to 100 characters, as the routes take it (the CLI on the store passes it as typed). */
  private name(name: string | undefined): string | undefined {
    if (name === undefined) return undefined;
    const trimmed = name.trim();
    if (trimmed.length < 1 || trimmed.length > MAX_NAME) throw invalid('name', `1 to ${MAX_NAME} characters`);
    return trimmed;
  }

  private expiry(unixSeconds: number | null | undefined, now: Date, field: string): Date | null {
    if (unixSeconds === undefined || unixSeconds === null) return null;
    if (!Number.isSafeInteger(unixSeconds) || unixSeconds > LAST_EXPIRY_SECONDS)
      throw invalid(field, `a Unix time in whole seconds, at most ${LAST_EXPIRY_SECONDS}`);
    if (unixSeconds <= seconds(now)) throw invalid(field, `must be in the future (now is ${seconds(now)})`);
    return new Date(unixSeconds * 1000);
  }
}

/** The key an issue or a rotation decided, as recorded. */
/** The answer to an issued or rotated key, the only time its secret is shown: its terms as the decision recorded them. */
function issuedKey(
  owner: KeyOwner,
  { key, record }: ReturnType<typeof generateKey>,
  events: (AccountEvent | SubAccountEvent)[],
  now: Date,
): IssuedKey {
  const issued = events.find((e) => e.type === 'ApiKeyIssued' || e.type === 'SubAccountKeyIssued');
  if (!issued) throw new Error('the decision issued no key');
  const expiresAt = issued.data.expiresAt ?? null;
  return {
    object: 'api_key',
    id: record.keyId,
    name: keyNameOf(issued.data.name),
    key,
    prefix: record.keyPrefix,
    sub_account_id: owner.subAccountId,
    created_at: seconds(now),
    expires_at: expiresAt === null ? null : seconds(new Date(expiresAt)),
  };
}
