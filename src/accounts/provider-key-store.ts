import type pg from 'pg';
import type { KeyHolder } from './live-keys.ts';
import { type Resealed, resealTable } from './reseal.ts';
import type { SecretBox } from './secret-box.ts';

/**
 * The secrets of the provider keys accounts bring, sealed (accounts/secret-box.ts), in a table of their own: not the
 * event log, not a read model, not in exports. A removed key's row is deleted. The hot path reads the index below,
 * in memory, never the table.
 */
const DDL = `CREATE TABLE IF NOT EXISTS provider_keys (
  id text PRIMARY KEY,
  account_id text NOT NULL,
  sub_account_id text,
  provider text NOT NULL,
  name text NOT NULL,
  last4 text NOT NULL,
  sealed text NOT NULL,
  created_at timestamptz NOT NULL
)`;

export interface ProviderKeyRow {
  id: string;
  accountId: string;
  subAccountId: string | null;
  provider: string;
  name: string;
  last4: string;
  sealed: string;
  createdAt: Date;
}

/**
 * A key as a request uses it: its id and name, and the secret, or why it cannot be read (no or another secrets key).
 */
export type OwnKey = { id: string; name: string } & ({ key: string } | { unreadable: string });

const COLUMNS = `id, account_id AS "accountId", sub_account_id AS "subAccountId", provider, name, last4, sealed,
  created_at AS "createdAt"`;

export class ProviderKeyStore {
  /** Opened secrets by key id, with who owns each: one sub-account's or the account's own (`subAccountId` null). */
  private readonly index = new Map<string, Omit<ProviderKeyRow, 'sealed'> & { opened: OwnKey }>();
  /** The ids of `index` by account: every served request asks for its account's keys, never for everyone's. */
  private readonly byAccount = new Map<string, Set<string>>();
  /** Keys removed since start (ids are never reused): a few bytes each. */
  private readonly removed = new Set<string>();

  constructor(
    private readonly sql: pg.Pool,
    readonly box: SecretBox | undefined,
  ) {}

  async start(): Promise<void> {
    await this.ensure();
    const { rows } = await this.sql.query<ProviderKeyRow>(`SELECT ${COLUMNS} FROM provider_keys`);
    for (const row of rows) this.hold(row);
  }

  async ensure(): Promise<void> {
    await this.sql.query(DDL);
  }

  async insert(row: ProviderKeyRow): Promise<void> {
    await this.sql.query(
      `INSERT INTO provider_keys (id, account_id, sub_account_id, provider, name, last4, sealed, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [row.id, row.accountId, row.subAccountId, row.provider, row.name, row.last4, row.sealed, row.createdAt],
    );
  }

  async delete(id: string): Promise<void> {
    await this.sql.query('DELETE FROM provider_keys WHERE id = $1', [id]);
    this.drop(id);
  }

  /** The owner's keys, newest last (never their secrets). */
  async listOf(accountId: string, subAccountId: string | null): Promise<ProviderKeyRow[]> {
    const { rows } = await this.sql.query<ProviderKeyRow>(
      `SELECT ${COLUMNS} FROM provider_keys WHERE account_id = $1 AND sub_account_id IS NOT DISTINCT FROM $2
       ORDER BY created_at, id`,
      [accountId, subAccountId],
    );
    return rows;
  }

  /** Reads one key again (a register or removal seen in the log, by any instance). */
  async refresh(id: string): Promise<void> {
    const { rows } = await this.sql.query<ProviderKeyRow>(
      `SELECT ${COLUMNS} FROM provider_keys WHERE id = $1`,
      [id],
    );
    const [row] = rows;
    if (row) this.hold(row);
    else this.drop(id);
  }

  /** Forgets a removed key at once, before its row goes, and for good: a read still under way cannot bring it back. */
  forget(id: string): void {
    this.removed.add(id);
    this.drop(id);
  }

  /**
   * The key a request of `holder` uses for `provider`: its sub-account's own first, else its account's; of several,
   * the newest.
   */
  ownKey(holder: Pick<KeyHolder, 'accountId' | 'subAccountId'>, provider: string): OwnKey | undefined {
    let mine: { at: number; opened: OwnKey } | undefined;
    let account: { at: number; opened: OwnKey } | undefined;
    for (const id of this.byAccount.get(holder.accountId) ?? []) {
      const entry = this.index.get(id);
      if (!entry || entry.provider !== provider) continue;
      const at = entry.createdAt.getTime();
      if (entry.subAccountId === null) {
        if (!account || at >= account.at) account = { at, opened: entry.opened };
      } else if (entry.subAccountId === holder.subAccountId && (!mine || at >= mine.at)) {
        mine = { at, opened: entry.opened };
      }
    }
    return (mine ?? account)?.opened;
  }

  /**
   * One key by its id, if it is still registered and `holder` may use it (its sub-account's own, or its account's):
   * what a job submitted on it is followed with, whether or not it is still the newest.
   */
  ownKeyById(holder: Pick<KeyHolder, 'accountId' | 'subAccountId'>, id: string): OwnKey | undefined {
    const entry = this.index.get(id);
    if (!entry || entry.accountId !== holder.accountId) return undefined;
    if (entry.subAccountId !== null && entry.subAccountId !== holder.subAccountId) return undefined;
    return entry.opened;
  }

  /** Seals again, under the current secrets key, every secret sealed under another (after a rotation). */
  async reencrypt(): Promise<Resealed> {
    const box = this.box;
    if (!box) throw new Error('GATEWAY_SECRETS_KEY is not set');
    await this.ensure();
    return resealTable(this.sql, box, 'provider_keys', ['id']);
  }

  private hold(row: ProviderKeyRow): void {
    if (this.removed.has(row.id)) return;
    const { sealed, ...entry } = row;
    this.index.set(row.id, { ...entry, opened: this.open(row.id, row.name, sealed) });
    const ids = this.byAccount.get(row.accountId) ?? new Set<string>();
    this.byAccount.set(row.accountId, ids.add(row.id));
  }

  private drop(id: string): void {
    const entry = this.index.get(id);
    if (!entry) return;
    this.index.delete(id);
    const ids = this.byAccount.get(entry.accountId);
    ids?.delete(id);
    if (ids?.size === 0) this.byAccount.delete(entry.accountId);
  }

  private open(id: string, name: string, sealed: string): OwnKey {
    if (!this.box) return { id, name, unreadable: 'GATEWAY_SECRETS_KEY is not set' };
    try {
      return { id, name, key: this.box.open(sealed) };
    } catch (error) {
      return { id, name, unreadable: (error as Error).message };
    }
  }
}
