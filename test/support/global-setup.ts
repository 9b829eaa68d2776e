import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startThrowawayPostgres } from './postgres-server.ts';
import { startThrowawayRedis } from './redis-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
    /** Where test gateways write answers that contradict the OpenAPI document (see openapi-check.ts). */
    openapiViolations: string;
  }
}

/**
 * One PostgreSQL and one Redis for the whole run, from DATABASE_URL / REDIS_URL when given; test files isolate
 * themselves inside them (a schema, a key prefix), so they can run in parallel.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [postgres, redis] = await Promise.all([startThrowawayPostgres(), startThrowawayRedis()]);
  project.provide('databaseUrl', postgres.url);
  project.provide('redisUrl', redis.url);
  const violations = join(await mkdtemp(join(tmpdir(), 'gw-openapi-')), 'violations.jsonl');
  await writeFile(violations, '');
  project.provide('openapiViolations', violations);
  return async () => {
    await Promise.allSettled([postgres.stop(), redis.stop()]);
    const found = (await readFile(violations, 'utf8')).trim();
    if (found) {
      console.error(`Answers that contradict the OpenAPI document (/v1/openapi.json):\n${found}`);
      process.exitCode = 1;
    }
  };
}
