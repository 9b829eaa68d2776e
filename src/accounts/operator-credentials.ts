import type { AddedSettings } from '../../commands/credential/operator.ts';
import { OperatorCredentialCommands } from '../../commands/credential/operator-handler.ts';
import { DomainError } from '../../commands/errors.ts';
import type { EventStore } from '../../events/store.ts';
import { invalidField, RequestRefused } from '../contracts/errors.ts';
import type { CredentialPools } from '../providers/credentials/pool.ts';
import type { LiveAccounts } from './live-state.ts';
import type { CredentialRow, OperatorCredentialStore } from './operator-credential-store.ts';
import { last4Of, specOf } from './operator-credential-views.ts';

export interface NewCredential extends AddedSettings {
  name: string;
  key: string;
}

/** A change of weight or limits: an absent field is kept, a null limit removed. */
export type CredentialChange = Partial<AddedSettings>;

export interface OperatorCredentialDeps {
  store: EventStore;
  table: OperatorCredentialStore;
  pools: CredentialPools;
  live: LiveAccounts;
  /** The providers a credential may be added to (the catalog's, bar the built-in one). */
  providers: () => string[];
  /** Whether the gateway has the provider's key (environment or config file), which makes its models available. */
  configured: (provider: string) => boolean;
  /** Resolves once this instance has read the log up to the checkpoint. */
  afterWrite: (checkpoint: string) => Promise<void>;
  clock: () => Date;
  log: (line: string) => void;
}

/**
 * Credentials the operator adds to a provider's pool at runtime (docs/providers.md#key-pools): the secret sealed into
 * `provider_credentials` first, then an event on the provider's `credential-` stream (no secret in it). Every instance
 * loads the table at start and, on each such event from any instance, reads that credential's row again, so the table
 * is what each pool follows; a removal deletes the row before its event is appended, so an instance reading on the
 * event finds it gone. Credentials of the config file and the environment are not changed here.
 */
export class OperatorCredentials {
  private readonly commands: OperatorCredentialCommands;
  /** The credentials this instance's pools hold from the table, by `provider/name`. */
  private readonly added = new Map<string, { provider: string; name: string }>();
  /** Reads of one credential's row, one after the other, so that an older read never lands after a newer one. */
  private readonly reads = new Map<string, Promise<void>>();

  constructor(private readonly deps: OperatorCredentialDeps) {
    this.commands = new OperatorCredentialCommands(deps.store);
  }

  /** Follows changes made anywhere, then loads every added credential; answers them (to seed their month's spend). */
  async start(): Promise<Array<{ provider: string; name: string }>> {
    await this.deps.table.ensure();
    this.deps.live.onCredentialEvent((event) => {
      if (event.type === 'ProviderCredentialRefused') return;
      void this.read(event.data.provider, event.data.credential);
    });
    for (const row of await this.deps.table.all()) this.apply(row.provider, row.name, row);
    return [...this.added.values()];
  }

  /** Whether the pool's credential of that name was added here (else it comes from the config file or environment). */
  isAdded(provider: string, name: string): boolean {
    return this.added.has(keyOf(provider, name));
  }

  async add(provider: string, input: NewCredential, correlationId?: string): Promise<void> {
    const { pools, table, providers, configured } = this.deps;
    if (!providers().includes(provider))
      throw invalidField('provider', `unknown provider '${provider}'; one of ${providers().join(', ')}`);
    if (!configured(provider))
      throw invalidField(
        'provider',
        `${provider} has no key configured on this gateway (its environment variable or the config file): its models are not available, so a credential added to its pool would serve nothing`,
      );
    if (!table.box)
      // As for the keys accounts bring: not a passing state, so not a 503 that clients would retry.
      throw new RequestRefused(
        'forbidden',
        'this gateway does not take provider credentials through its API: its operator has not set GATEWAY_SECRETS_KEY (docs/operations.md)',
      );
    if (pools.spec(provider, input.name) && !this.isAdded(provider, input.name))
      throw fromConfig(provider, input.name);
    const now = this.deps.clock();
    const { name, key, ...settings } = input;
    const row: CredentialRow = {
      provider,
      name,
      last4: last4Of(key),
      sealed: table.box.seal(key),
      ...settings,
      createdAt: now,
    };
    if (!(await table.insert(row)))
      throw new DomainError(
        'conflict',
        `'name': ${provider}'s pool already has a credential '${name}'`,
        'name',
      );
    let checkpoint: string | undefined;
    try {
      const command = {
        type: 'AddCredential' as const,
        provider,
        credential: name,
        last4: row.last4,
        ...settings,
      };
      ({ checkpoint } = await this.commands.handle(command, { now, correlationId }));
    } catch (error) {
      await table.delete(provider, name);
      throw error;
    }
    await this.settle(provider, name, checkpoint);
  }

  async change(
    provider: string,
    name: string,
    change: CredentialChange,
    correlationId?: string,
  ): Promise<void> {
    const row = await this.rowOf(provider, name);
    const before: AddedSettings = {
      weight: row.weight,
      rpm: row.rpm,
      tpm: row.tpm,
      monthlySpendNanos: row.monthlySpendNanos,
    };
    const after: AddedSettings = { ...before, ...change };
    const now = this.deps.clock();
    await this.deps.table.update(provider, name, after, now);
    let checkpoint: string | undefined;
    try {
      const command = { type: 'ChangeCredential' as const, provider, credential: name, ...after };
      ({ checkpoint } = await this.commands.handle(command, { now, correlationId }));
    } catch (error) {
      await this.deps.table.update(provider, name, before, now);
      throw error;
    }
    await this.settle(provider, name, checkpoint);
  }

  async remove(provider: string, name: string, correlationId?: string): Promise<void> {
    if (this.deps.pools.spec(provider, name) && !this.isAdded(provider, name))
      throw fromConfig(provider, name);
    // Deleted first: an instance that reads the row on the removal's event must find it gone.
    const deleted = await this.deps.table.delete(provider, name);
    let checkpoint: string | undefined;
    try {
      const command = { type: 'RemoveCredential' as const, provider, credential: name };
      ({ checkpoint } = await this.commands.handle(command, { now: this.deps.clock(), correlationId }));
    } catch (error) {
      if (deleted) await this.deps.table.insert(deleted);
      throw error;
    }
    await this.settle(provider, name, checkpoint);
  }

  /** The added credential's row; a config file's or unknown one is refused, naming why. */
  private async rowOf(provider: string, name: string): Promise<CredentialRow> {
    const row = await this.deps.table.get(provider, name);
    if (row) return row;
    if (this.deps.pools.spec(provider, name)) throw fromConfig(provider, name);
    throw new DomainError('not_found', `no credential '${name}' in ${provider}'s pool`, 'name');
  }

  /** Answers once this instance has read the log to the change and applied the row as it now stands. */
  private async settle(provider: string, name: string, checkpoint: string | undefined): Promise<void> {
    if (checkpoint) await this.deps.afterWrite(checkpoint);
    await this.read(provider, name);
  }

  private read(provider: string, name: string): Promise<void> {
    const key = keyOf(provider, name);
    const next = (this.reads.get(key) ?? Promise.resolve())
      .then(async () => this.apply(provider, name, await this.deps.table.get(provider, name)))
      .catch((error: unknown) =>
        this.deps.log(`reading provider credential ${key} failed: ${(error as Error).message}`),
      );
    this.reads.set(key, next);
    void next.finally(() => {
      if (this.reads.get(key) === next) this.reads.delete(key);
    });
    return next;
  }

  /** Makes this instance's pool hold the row as it is (or no longer hold it). */
  private apply(provider: string, name: string, row: CredentialRow | undefined): void {
    const key = keyOf(provider, name);
    const { pools, table, log } = this.deps;
    if (!this.added.has(key) && pools.spec(provider, name)) {
      if (row)
        log(`provider credential ${key} added through the API is left out: the config file names one so`);
      return;
    }
    let secret: string | undefined;
    try {
      if (row && !table.box) throw new Error('GATEWAY_SECRETS_KEY is not set');
      secret = row && table.box?.open(row.sealed);
    } catch (error) {
      log(`provider credential ${key} cannot be opened, left out: ${(error as Error).message}`);
    }
    if (!row || secret === undefined) {
      if (this.added.delete(key)) pools.remove(provider, name);
      return;
    }
    pools.put(provider, specOf(row, secret));
    this.added.set(key, { provider, name });
  }
}

const keyOf = (provider: string, name: string) => `${provider}/${name}`;

const fromConfig = (provider: string, name: string) =>
  new DomainError(
    'conflict',
    `'name': ${provider}'s credential '${name}' comes from the config file or the environment: change it there and restart`,
    'name',
  );
