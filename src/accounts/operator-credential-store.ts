import type pg from 'pg';
import type { AddedSettings } from '../../commands/credential/operator.ts';
import { type Resealed, resealTable } from './reseal.ts';
import type { SecretBox } from './secret-box.ts';

/**
 * The secrets of the credentials the operator adds through the admin API or CLI, sealed (accounts/secret-box.ts), with
 * their weight and limits, in a table of their own: not the event log, not a read model, not in exports. Every
 * instance loads it at start and reads a row again when the `credential-` stream says it changed; the hot path reads
 * the pools in memory, never this table.
 */
const DDL = `CREATE TABLE IF NOT EXISTS provider_credentials (
  provider text NOT NULL,
  name text NOT NULL,
  last4 text NOT NULL,
  sealed text NOT NULL,
  weight integer NOT NULL,
  rpm integer,
  tpm integer,
  monthly_spend_nanos text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (provider, name)
)`;

export interface CredentialRow extends AddedSettings {
  provider: string;
  name: string;
  last4: string;
  sealed: string;
  createdAt: Date;
}

const COLUMNS = `provider, name, last4, sealed, weight, rpm, tpm, monthly_spend_nanos AS "monthlySpendNanos",
  created_at AS "createdAt"`;
const UNIQUE_VIOLATION = '23505';
const DUPLICATE_TABLE = '42P07';

export class OperatorCredentialStore {
  constructor(
    private readonly sql: pg.Pool,
    readonly box: SecretBox | undefined,
  ) {}

  async ensure(): Promise<void> {
    // Two instances starting at once on a fresh schema may both create it: PostgreSQL's IF NOT EXISTS can still
    // fail the second with a unique violation on its catalog, which means the table is there.
    await this.sql.query(DDL).catch((error: { code?: string }) => {
      if (error.code !== UNIQUE_VIOLATION && error.code !== DUPLICATE_TABLE) throw error;
    });
  }

  async all(): Promise<CredentialRow[]> {
    const { rows } = await this.sql.query<CredentialRow>(
      `SELECT ${COLUMNS} FROM provider_credentials ORDER BY created_at, provider, name`,
    );
    return rows;
  }

  async get(provider: string, name: string): Promise<CredentialRow | undefined> {
    const { rows } = await this.sql.query<CredentialRow>(
      `SELECT ${COLUMNS} FROM provider_credentials WHERE provider = $1 AND name = $2`,
      [provider, name],
    );
    return rows[0];
  }

  /** False when the provider already has a row of that name. */
  async insert(row: CredentialRow): Promise<boolean> {
    try {
      await this.sql.query(
        `INSERT INTO provider_credentials
           (provider, name, last4, sealed, weight, rpm, tpm, monthly_spend_nanos, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
        [row.provider, row.name, row.last4, row.sealed, ...settingsOf(row), row.createdAt],
      );
      return true;
    } catch (error) {
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) return false;
      throw error;
    }
  }

  async update(provider: string, name: string, settings: AddedSettings, at: Date): Promise<void> {
    await this.sql.query(
      `UPDATE provider_credentials SET weight = $3, rpm = $4, tpm = $5, monthly_spend_nanos = $6, updated_at = $7
       WHERE provider = $1 AND name = $2`,
      [provider, name, ...settingsOf(settings), at],
    );
  }

  /** Deletes the row and answers what it held, so that a removal that could not be recorded can put it back. */
  async delete(provider: string, name: string): Promise<CredentialRow | undefined> {
    const { rows } = await this.sql.query<CredentialRow>(
      `DELETE FROM provider_credentials WHERE provider = $1 AND name = $2 RETURNING ${COLUMNS}`,
      [provider, name],
    );
    return rows[0];
  }

  /** Seals again, under the current secrets key, every secret sealed under another (after a rotation). */
  async reencrypt(): Promise<Resealed> {
    if (!this.box) throw new Error('GATEWAY_SECRETS_KEY is not set');
    await this.ensure();
    return resealTable(this.sql, this.box, 'provider_credentials', ['provider', 'name']);
  }
}

const settingsOf = (s: AddedSettings) => [s.weight, s.rpm, s.tpm, s.monthlySpendNanos] as const;
