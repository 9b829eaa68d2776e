import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { get } from 'node:http';
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
  if (await dockerEngineAvailable()) return startContainer();
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

/** A Docker engine that answers its ping (DOCKER_HOST is trusted as given). */
export async function dockerEngineAvailable(): Promise<boolean> {
  if (process.env.DOCKER_HOST) return true;
  const socketPath = '/var/run/docker.sock';
  if (!existsSync(socketPath)) return false;
  return new Promise((resolve) => {
    const request = get({ socketPath, path: '/_ping', timeout: 1000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on('error', () => resolve(false));
    request.on('timeout', () => {
      request.destroy();
      resolve(false);
    });
  });
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
