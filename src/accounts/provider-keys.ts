import { randomBytes } from 'node:crypto';
import { AccountCommands } from '../../commands/account/handler.ts';
import type { EventStore } from '../../events/store.ts';
import { invalidField, RequestRefused } from '../contracts/errors.ts';
import type { KeyHolder, LiveAccounts } from './live-state.ts';
import { last4Of } from './operator-credential-views.ts';
import type { OwnKey, ProviderKeyRow, ProviderKeyStore } from './provider-key-store.ts';

export const MAX_PROVIDER_KEY_NAME = 100;
/** Longer than any provider's key (Google's service-account JSON is not a key this takes). */
export const MAX_PROVIDER_KEY_LENGTH = 4096;

/** A provider key as the API shows it: never its secret, only its last four characters. */
export interface ProviderKeyView {
  object: 'provider_key';
  id: string;
  provider: string;
  name: string;
  last4: string;
  sub_account_id: string | null;
  created_at: number;
}

const view = (row: Omit<ProviderKeyRow, 'sealed'>): ProviderKeyView => ({
  object: 'provider_key',
  id: row.id,
  provider: row.provider,
  name: row.name,
  last4: row.last4,
  sub_account_id: row.subAccountId,
  created_at: Math.floor(row.createdAt.getTime() / 1000),
});

/**
 * Provider keys accounts bring (docs/providers.md, Bring your own key): the secret sealed in the store's table
 * first, then `ProviderKeyRegistered` on the account's stream (no secret in it), which every instance's index
 * follows; removal appends `ProviderKeyRemoved` first, then deletes the row. A sub-account registers its own only
 * when its account allows it (`byok_sub_accounts`).
 */
export class ProviderKeys {
  private readonly accounts: AccountCommands;

  constructor(
    store: EventStore,
    readonly keys: ProviderKeyStore,
    private readonly live: LiveAccounts,
    /** The providers a key may be registered for (those a request can be served by, bar the built-in one). */
    private readonly providers: () => string[],
    private readonly afterWrite: (checkpoint: string) => Promise<void>,
    private readonly clock: () => Date,
  ) {
    this.accounts = new AccountCommands(store);
  }

  /** Follows registrations and removals made anywhere, then loads what the table holds. */
  async start(log: (line: string) => void): Promise<void> {
    this.live.onProviderKeyChanged((id, removed) => {
      // A removal is final whatever the table still says: its row goes only after the event is durable, so an
      // instance reading it now could find it still there.
      if (removed) return this.keys.forget(id);
      this.keys
        .refresh(id)
        .catch((error: unknown) => log(`reading provider key ${id} failed: ${String(error)}`));
    });
    await this.keys.start();
  }

  ownKey(holder: Pick<KeyHolder, 'accountId' | 'subAccountId'>, provider: string): OwnKey | undefined {
    return this.keys.ownKey(holder, provider);
  }

  /** A key by its id, while registered and usable by `holder` (a job follows the key that submitted it). */
  ownKeyById(holder: Pick<KeyHolder, 'accountId' | 'subAccountId'>, id: string): OwnKey | undefined {
    return this.keys.ownKeyById(holder, id);
  }

  /** Whether a failing own key of the account may give way to the operator's pool. */
  fallback(accountId: string): boolean {
    return this.live.account(accountId)?.byokFallback === true;
  }

  async register(
    holder: KeyHolder,
    input: { provider: string; apiKey: string; name: string },
    correlationId?: string,
  ): Promise<ProviderKeyView> {
    this.permit(holder);
    const provider = input.provider.trim();
    if (!this.providers().includes(provider))
      throw invalidField('provider', `unknown provider '${provider}'; one of ${this.providers().join(', ')}`);
    const name = input.name.trim();
    const apiKey = input.apiKey.trim();
    if (!this.keys.box)
      // Not a passing state (a 503 would have SDKs retry it): this gateway takes no provider keys until its
      // operator sets a key to seal them with.
      throw new RequestRefused(
        'forbidden',
        'this gateway does not take provider keys: its operator has not set GATEWAY_SECRETS_KEY (docs/operations.md)',
      );
    const now = this.clock();
    const row: ProviderKeyRow = {
      id: `pk_${randomBytes(12).toString('base64url')}`,
      accountId: holder.accountId,
      subAccountId: holder.subAccountId,
      provider,
      name,
      last4: last4Of(apiKey),
      sealed: this.keys.box.seal(apiKey),
      createdAt: now,
    };
    await this.keys.insert(row);
    try {
      const decision = await this.accounts.handle(
        holder.accountId,
        { type: 'RegisterProviderKey', providerKeyId: row.id, ...pick(row) },
        { now, correlationId },
      );
      await this.keys.refresh(row.id);
      if (decision.checkpoint) await this.afterWrite(decision.checkpoint);
    } catch (error) {
      await this.keys.delete(row.id);
      throw error;
    }
    return view(row);
  }

  async list(holder: KeyHolder): Promise<ProviderKeyView[]> {
    this.permit(holder);
    return (await this.keys.listOf(holder.accountId, holder.subAccountId)).map(view);
  }

  async remove(holder: KeyHolder, id: string, correlationId?: string) {
    this.permit(holder);
    const decision = await this.accounts.handle(
      holder.accountId,
      { type: 'RemoveProviderKey', subAccountId: holder.subAccountId, providerKeyId: id },
      { now: this.clock(), correlationId },
    );
    this.keys.forget(id);
    if (decision.checkpoint) await this.afterWrite(decision.checkpoint);
    await this.keys.delete(id);
    return { object: 'provider_key' as const, id, deleted: true as const };
  }

  private permit(holder: KeyHolder): void {
    if (holder.subAccountId === null) return;
    if (this.live.account(holder.accountId)?.byokSubAccounts === true) return;
    throw new RequestRefused(
      'forbidden',
      "this sub-account may not manage provider keys: its account's byok_sub_accounts setting is off",
    );
  }
}

const pick = (row: ProviderKeyRow) => ({
  subAccountId: row.subAccountId,
  provider: row.provider,
  name: row.name,
  last4: row.last4,
});
