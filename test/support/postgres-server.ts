import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../../src/db/embedded.ts';

export interface ThrowawayServer {
  url: string;
  stop(): Promise<void>;
}

/** DATABASE_URL when given; else a container when a Docker engine runs; else the embedded launcher. */
export async function startThrowawayPostgres(): Promise<ThrowawayServer> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, stop: async () => {} };
  if (dockerEngineAvailable()) return startContainer();
  const dir = await mkdtemp(join(tmpdir(), 'gw-test-pg-'));
  const server = await startEmbeddedPostgres({ dataDir: dir, whenRunning: 'restart', durable: false });
  return {
    url: server.connectionString,
    async stop() {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function dockerEngineAvailable(): boolean {
  return Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock');
}

async function startContainer(): Promise<ThrowawayServer> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const container = await new GenericContainer('postgres:17-alpine')
    .withEnvironment({ POSTGRES_PASSWORD: 'test', POSTGRES_USER: 'test', POSTGRES_DB: 'test' })
    .withExposedPorts(5432)
    .withWaitStrategy(Wait.forLogMessage(/ready to accept connections/, 2))
    .start();
  return {
    url: `postgres://test:test@${container.getHost()}:${container.getMappedPort(5432)}/test`,
    stop: async () => {
      await container.stop();
    },
  };
}
