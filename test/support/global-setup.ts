import type { TestProject } from 'vitest/node';
import { startThrowawayPostgres } from './postgres-server.ts';
import { startThrowawayRedis } from './redis-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    redisUrl: string;
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
  return async () => {
    await Promise.allSettled([postgres.stop(), redis.stop()]);
  };
}
