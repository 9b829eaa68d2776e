import pg from 'pg';
import type { Config } from '../config.ts';
import { type EmbeddedPostgres, startEmbeddedPostgres } from './embedded.ts';

/** The PostgreSQL that holds read models (and events, on the postgres event store). */
export interface Database {
  pool: pg.Pool;
  schema: string;
  /** Settings for a dedicated connection (LISTEN) in the same schema. */
  clientConfig: pg.ClientConfig;
  /** A further pool on the same database, closed with it. */
  dedicatedPool(max: number): pg.Pool;
  /** The managed server when running embedded; undefined against DATABASE_URL. */
  embedded: EmbeddedPostgres | undefined;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** See EmbeddedOptions.whenRunning. */
  whenRunning: 'attach' | 'restart';
  log?: (line: string) => void;
  durable?: boolean;
}

// Dates stay JS Dates; bigint columns arrive as strings and are converted where read.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => value);

export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'dbSchema'>,
  options: OpenDatabaseOptions,
): Promise<Database> {
  const embedded = config.databaseUrl
    ? undefined
    : await startEmbeddedPostgres({
        dataDir: config.dataDir,
        whenRunning: options.whenRunning,
        log: options.log,
        durable: options.durable,
      });
  const connectionString = config.databaseUrl ?? (embedded as EmbeddedPostgres).connectionString;
  const schema = config.dbSchema;
  const clientConfig: pg.ClientConfig = { connectionString, options: `-c search_path=${schema}` };
  const bootstrap = new pg.Client({ connectionString });
  await bootstrap.connect();
  try {
    await bootstrap
      .query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`)
      .catch(async (error: { code?: string }) => {
        // Two processes creating the schema at once: the loser sees a unique violation; the schema exists.
        if (error.code !== '23505' && error.code !== '42P06') throw error;
      });
  } finally {
    await bootstrap.end();
  }
  const pool = new pg.Pool({ ...clientConfig, max: 10 });
  pool.on('error', () => {
    // An idle client lost its connection; the pool replaces it on the next checkout.
  });
  const extra: pg.Pool[] = [];
  return {
    pool,
    schema,
    clientConfig,
    embedded,
    dedicatedPool(max) {
      const dedicated = new pg.Pool({ ...clientConfig, max });
      dedicated.on('error', () => {});
      extra.push(dedicated);
      return dedicated;
    },
    async close() {
      await Promise.all(extra.map((p) => p.end()));
      await pool.end();
      await embedded?.stop();
    },
  };
}
