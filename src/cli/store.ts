import { access } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../config.ts';

/** Where the CLI's direct work happens, for the operator to read on stderr (no password in it). */
export function describeStore(config: Config): string {
  const events =
    config.eventStore === 'esdb' ? `; events in EventStoreDB at ${redact(config.esdbUrl ?? '')}` : '';
  if (!config.databaseUrl) return `embedded PostgreSQL in ${join(config.dataDir, 'pg')}${events}`;
  return `PostgreSQL ${redact(config.databaseUrl)}, schema ${config.dbSchema}${events}`;
}

function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}

export class NoStoreError extends Error {}

/**
 * Refuses to go on against a store no gateway ever made: a CLI pointed at the wrong place would otherwise
 * create a fresh one, issue keys into it and report success, and the gateway (elsewhere) would know nothing
 * of them. `--init` is the operator saying a new store is meant.
 */
export async function requireExistingStore(config: Config, gatewayUrl: string): Promise<void> {
  const hint = `no gateway answered at ${gatewayUrl} (set GATEWAY_URL and GATEWAY_ADMIN_TOKEN to reach one)`;
  if (!config.databaseUrl) {
    const found = await access(join(config.dataDir, 'pg', 'PG_VERSION')).then(
      () => true,
      () => false,
    );
    if (!found)
      throw new NoStoreError(
        `${hint}, and there is no store in ${config.dataDir} (set GATEWAY_DATA_DIR or DATABASE_URL to the gateway's); pass --init to create a new one there`,
      );
    return;
  }
  // pg is loaded here, not with the file: main.ts imports this file for every command, and most reach a gateway.
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: config.databaseUrl });
  client.on('error', () => {});
  try {
    await client.connect();
    const { rows } = await client.query(
      `SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'projection_checkpoints'`,
      [config.dbSchema],
    );
    if (rows.length === 0)
      throw new NoStoreError(
        `${hint}, and schema ${config.dbSchema} of ${redact(config.databaseUrl)} holds no gateway store (check GATEWAY_DB_SCHEMA); pass --init to create one there`,
      );
  } catch (error) {
    if (error instanceof NoStoreError) throw error;
    throw new NoStoreError(
      `${hint}, and the database ${redact(config.databaseUrl)} is unreachable: ${(error as Error).message}`,
    );
  } finally {
    await client.end().catch(() => {});
  }
}
