import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import type { CatalogSource } from '../../src/catalog/index.ts';
import { loadConfig } from '../../src/config.ts';
import { type Runtime, startRuntime } from '../../src/runtime.ts';
import { dropSchema } from './database.ts';
import { checkAnswersAgainstOpenApi } from './openapi-check.ts';

export interface TestGateway {
  url: string;
  runtime: Runtime;
  adminToken: string;
  /** Environment that points a CLI process at this gateway's store and admin API. */
  env: Record<string, string>;
  admin(path: string, body?: unknown): Promise<Response>;
  close(): Promise<void>;
}

export interface TestGatewayOptions {
  /** Share another gateway's schema (a second instance over the same store). */
  schema?: string;
  clock?: () => Date;
  workerIntervalsMs?: {
    expiry?: number;
    summary?: number;
    jobs?: number;
    batches?: number;
    webhooks?: number;
    evals?: number;
  };
  /** Use this data directory (kept at close): a second gateway over another's blobs, after a restart. */
  dataDir?: string;
  /** The model catalog's source (a small price list), instead of the bundled one. */
  catalog?: CatalogSource;
  /** Where the gateway's operator log lines go (dropped by default). */
  log?: (line: string) => void;
}

/** A gateway in this process on a free port, over the run's PostgreSQL in a schema of its own. */
export async function startTestGateway(
  extra: Record<string, string> = {},
  options: TestGatewayOptions = {},
): Promise<TestGateway> {
  const schema = options.schema ?? `g_${randomBytes(6).toString('hex')}`;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'gw-test-')));
  const adminToken = `gw-admin-${randomBytes(16).toString('hex')}`;
  const env: Record<string, string> = {
    DATABASE_URL: inject('databaseUrl'),
    GATEWAY_DB_SCHEMA: schema,
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_ADMIN_TOKEN: adminToken,
    PORT: '0',
    LOG_LEVEL: 'warn',
    ...extra,
  };
  const runtime = await startRuntime(loadConfig(env), {
    log: options.log ?? (() => {}),
    clock: options.clock,
    workerIntervalsMs: options.workerIntervalsMs,
    catalog: options.catalog,
  });
  checkAnswersAgainstOpenApi(runtime.app, inject('openapiViolations'));
  const address = await runtime.app.listen({ port: 0, host: '127.0.0.1' });
  env.GATEWAY_URL = address;
  return {
    url: address,
    runtime,
    adminToken,
    env,
    admin: (path, body) =>
      fetch(`${address}/admin${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${adminToken}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    async close() {
      await runtime.close();
      if (!options.schema) await dropSchema(schema);
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export async function eventually<T>(
  probe: () => Promise<T>,
  accept: (value: T) => boolean,
  ms = 1000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (accept(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
}
