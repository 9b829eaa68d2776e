import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/db/embedded.ts';

/** A `redis-server` from the PATH that the test can kill and start again on the same port. */
export interface RedisProcess {
  url: string;
  kill(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedis(): Promise<RedisProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-fault-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
      { stdio: 'ignore' },
    );
    for (let attempt = 0; attempt < 200; attempt++) {
      if (await listening(port)) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`redis-server did not listen on port ${port}`);
  };
  const kill = async () => {
    const running = child;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    await new Promise((resolve) => {
      running.once('exit', resolve);
      running.kill('SIGKILL');
    });
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    kill,
    start,
    async stop() {
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' }, () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}
