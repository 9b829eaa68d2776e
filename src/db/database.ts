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

/**
 * How long a query may wait for a connection, the pool's queue included. While the database is gone (a restart,
 * a failover) requests fail within this bound, as 503s, instead of queueing without end.
 */
const CONNECT_TIMEOUT_MS = 5000;

/**
 * A pool that survives its server going away. A client the pool holds idle has the pool's own error listener,
 * but one checked out (a lease held for minutes, a transaction in flight) has none, and a connection that dies
 * under it would raise an unhandled 'error' event and end the process. Every client therefore gets a listener
 * of its own; the code holding it sees its next query fail, and the pool discards the broken client when it
 * comes back and opens a fresh connection on the next checkout.
 */
function resilientPool(config: pg.ClientConfig, max: number): pg.Pool {
  // Keep-alive probes let an idle connection to a server that vanished without closing it be noticed.
  const pool = new pg.Pool({ ...config, max, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true });
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  return pool;
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
        small: true,
      });
  const connectionString = config.databaseUrl ?? (embedded as EmbeddedPostgres).connectionString;
  const schema = config.dbSchema;
  const clientConfig: pg.ClientConfig = { connectionString, options: `-c search_path=${schema}` };
  const bootstrap = new pg.Client({ connectionString });
  bootstrap.on('error', () => {}); // a lost connection fails the query below instead
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
  // The embedded store serves this process alone, so it gets fewer connections: each is a server process.
  const pool = resilientPool(clientConfig, embedded ? 5 : 10);
  const extra: pg.Pool[] = [];
  return {
    pool,
    schema,
    clientConfig,
    embedded,
    dedicatedPool(max) {
      const dedicated = resilientPool(clientConfig, max);
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
