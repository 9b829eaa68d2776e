/**
 * What the bench measures, each started as its own process tree: the upstream simulator, the gateway (embedded
 * PostgreSQL, or an external PostgreSQL with Redis limits) and Portkey's gateway.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { request } from 'undici';
import { freePort, startEmbeddedPostgres } from '../src/db/embedded.ts';
import { startThrowawayRedis } from '../test/support/redis-server.ts';
import type { Endpoint } from './load.ts';
import { type Child, childrenOf, commandName, onCleanup, spawnChild, terminatePid } from './procs.ts';

export const ROOT = join(import.meta.dirname, '..');
const CHAT = '/v1/chat/completions';
const TSX = ['--import', 'tsx'];

export interface Simulator {
  url: string;
  child: Child;
  /** Completions it has served. */
  served(): Promise<number>;
}

export async function startSimulator(options: { latencyMs: number; chunkMs: number }): Promise<Simulator> {
  const child = spawnChild(process.execPath, [...TSX, join(ROOT, 'bench/simulator.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      SIM_PORT: '0',
      SIM_LATENCY_MS: String(options.latencyMs),
      SIM_CHUNK_MS: String(options.chunkMs),
    },
    name: 'simulator',
  });
  const match = await child.waitFor(/listening (\d+)/, 30_000);
  const url = `http://127.0.0.1:${match[1]}`;
  return {
    url,
    child,
    async served() {
      const response = await request(`${url}/stats`);
      return ((await response.body.json()) as { served: number }).served;
    },
  };
}

export interface Charges {
  /** Where the gateway's read models are. */
  connectionString: string;
  schema: string;
}

export interface RunningTarget {
  name: string;
  endpoint: Endpoint;
  /** The target's process tree, for its memory. */
  pids: number[];
  /** Processes the target needs but did not start itself (an external PostgreSQL, Redis). */
  servicePids?: number[];
  charges?: () => Promise<Charges>;
  stop(): Promise<void>;
}

export interface TargetSpec {
  id: string;
  label: string;
  start(simulator: Simulator): Promise<RunningTarget>;
}

const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';

export const direct: TargetSpec = {
  id: 'direct',
  label: 'direct (simulator)',
  async start(simulator) {
    return {
      name: 'direct',
      endpoint: { origin: simulator.url, path: CHAT, headers: { authorization: 'Bearer bench' } },
      pids: [simulator.child.pid],
      async stop() {},
    };
  },
};

const dirsToRemove = new Map<string, { remove: () => Promise<void>; forget: () => void }>();

/** A temporary folder, removed at the end of the bench (kept with BENCH_KEEP=1). */
async function tempDir(name: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `gw-bench-${name}-`));
  const remove = async () => {
    if (!process.env.BENCH_KEEP) await rm(dir, { recursive: true, force: true });
  };
  dirsToRemove.set(dir, { remove, forget: onCleanup(remove) });
  return dir;
}

async function removeDir(dir: string): Promise<void> {
  const entry = dirsToRemove.get(dir);
  if (!entry) return;
  dirsToRemove.delete(dir);
  entry.forget();
  await entry.remove();
}

/** Reads `<pgdata>/postmaster.pid`: line 1 the pid, line 4 the port. */
async function postmaster(pgdata: string): Promise<{ pid: number; port: number } | undefined> {
  try {
    const lines = (await readFile(join(pgdata, 'postmaster.pid'), 'utf8')).split('\n');
    return { pid: Number(lines[0]), port: Number(lines[3]) };
  } catch {
    return undefined;
  }
}

async function admin(gateway: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await request(`${gateway}/admin${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`POST /admin${path}: ${response.statusCode} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

interface GatewayProcess {
  url: string;
  child: Child;
  /** One API key per account. */
  keys: string[];
}

/**
 * Starts the gateway as `npm start` does (`node scripts/start.mjs`) and gives it accounts (BENCH_ACCOUNTS, default 1) with ample credit
 * and no practical rate limit; requests take their keys in turn.
 */
async function startGatewayProcess(
  simulator: Simulator,
  dataDir: string,
  extraEnv: Record<string, string>,
): Promise<GatewayProcess> {
  const accounts = Number(process.env.BENCH_ACCOUNTS ?? 1) || 1;
  const port = await freePort();
  // BENCH_GATEWAY_NODE_ARGS: extra flags for the gateway's node, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.
  const extraArgs = (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(' ').filter(Boolean);
  // What `npm start` runs: the compiled gateway, built first when the sources are newer than dist/.
  const child = spawnChild(process.execPath, [...extraArgs, join(ROOT, 'scripts/start.mjs')], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      GATEWAY_DATA_DIR: dataDir,
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      LOG_LEVEL: 'warn',
      OPENAI_API_KEY: 'bench',
      OPENAI_BASE_URL: `${simulator.url}/v1`,
      GATEWAY_DEMO_CREDIT_CENTS: '0',
      ...extraEnv,
    },
    name: 'gateway',
  });
  await child.waitFor(/gateway listening on (\S+)/, 120_000);
  const url = `http://127.0.0.1:${port}`;
  const keys: string[] = [];
  for (let i = 0; i < Math.max(1, accounts); i++) {
    const account = await admin(url, '/accounts', { name: `bench-${i}` });
    const accountId = account.account_id as string;
    const key = account.key as string;
    if (!accountId || !key) throw new Error(`POST /admin/accounts answered ${JSON.stringify(account)}`);
    await admin(url, `/accounts/${accountId}/top-ups`, { cents: 1_000_000_000, reference: 'bench' });
    await admin(url, `/accounts/${accountId}/settings`, { rate_limit_rpm: 1_000_000 });
    keys.push(key);
  }
  return { url, child, keys };
}

function gatewayEndpoint(gateway: GatewayProcess): Endpoint {
  const [first, ...others] = gateway.keys.map((key) => ({ authorization: `Bearer ${key}` }));
  return {
    origin: gateway.url,
    path: CHAT,
    headers: first ?? {},
    ...(others.length > 0 && { rotate: [first ?? {}, ...others] }),
  };
}

export const gatewayEmbedded: TargetSpec = {
  id: 'gateway',
  label: 'gateway (embedded PG)',
  async start(simulator) {
    const dataDir = await tempDir('embedded');
    const pgdata = join(dataDir, 'pg');
    // A gateway killed before it stopped its PostgreSQL leaves it running: stop that too.
    const forgetPg = onCleanup(async () => {
      const pm = await postmaster(pgdata);
      if (pm) await terminatePid(pm.pid, 10_000, 'SIGINT');
    });
    const gateway = await startGatewayProcess(simulator, dataDir, {});
    return {
      name: 'gateway',
      endpoint: gatewayEndpoint(gateway),
      pids: [gateway.child.pid],
      async charges() {
        const pm = await postmaster(pgdata);
        if (!pm) throw new Error(`no ${pgdata}/postmaster.pid`);
        const password = (await readFile(join(dataDir, 'pg-password'), 'utf8')).trim();
        return {
          connectionString: `postgres://gateway:${encodeURIComponent(password)}@127.0.0.1:${pm.port}/postgres`,
          schema: 'gateway',
        };
      },
      async stop() {
        await gateway.child.stop(20_000);
        const pm = await postmaster(pgdata);
        if (pm) await terminatePid(pm.pid, 10_000, 'SIGINT');
        forgetPg();
        await removeDir(dataDir);
      },
    };
  },
};

export const gatewayExternal: TargetSpec = {
  id: 'gateway-external',
  label: 'gateway (ext. PG + Redis)',
  async start(simulator) {
    const pgDir = await tempDir('external-pg');
    // Durable, as a production server would be (the test helper turns fsync off; the embedded default keeps it).
    const pg = await startEmbeddedPostgres({ dataDir: pgDir, whenRunning: 'restart', durable: true });
    const forgetPg = onCleanup(() => pg.stop());
    const pgPid = (await postmaster(join(pgDir, 'pg')))?.pid;
    const before = new Set(childrenOf(process.pid));
    const redis = await startThrowawayRedis();
    const forgetRedis = onCleanup(() => redis.stop());
    const redisPid = childrenOf(process.pid).find((p) => !before.has(p) && commandName(p) === 'redis-server');
    const dataDir = await tempDir('external-gw');
    const gateway = await startGatewayProcess(simulator, dataDir, {
      DATABASE_URL: pg.connectionString,
      REDIS_URL: redis.url,
    });
    return {
      name: 'gateway-external',
      endpoint: gatewayEndpoint(gateway),
      pids: [gateway.child.pid],
      servicePids: [pgPid, redisPid].filter((p): p is number => p !== undefined),
      charges: async () => ({ connectionString: pg.connectionString, schema: 'gateway' }),
      async stop() {
        await gateway.child.stop(20_000);
        await redis.stop();
        forgetRedis();
        await pg.stop();
        forgetPg();
        await removeDir(dataDir);
        await removeDir(pgDir);
      },
    };
  },
};

/** Portkey's gateway as published (`@portkey-ai/gateway`): its Node server entry, `build/start-server.js`. */
export function portkeyEntry(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('@portkey-ai/gateway/package.json')), 'build', 'start-server.js');
}

export const portkey: TargetSpec = {
  id: 'portkey',
  label: "Portkey's gateway",
  async start(simulator) {
    const port = await freePort();
    const child = spawnChild(process.execPath, [portkeyEntry(), `--port=${port}`, '--headless'], {
      cwd: ROOT,
      env: { ...process.env, NODE_ENV: 'production' },
      name: 'portkey',
    });
    await child.waitFor(/Ready for connections/, 60_000);
    return {
      name: 'portkey',
      endpoint: {
        origin: `http://127.0.0.1:${port}`,
        path: CHAT,
        headers: {
          authorization: 'Bearer bench',
          'x-portkey-provider': 'openai',
          'x-portkey-custom-host': `${simulator.url}/v1`,
        },
      },
      pids: [child.pid],
      stop: () => child.stop(10_000),
    };
  },
};

export const ALL_TARGETS: TargetSpec[] = [direct, gatewayEmbedded, gatewayExternal, portkey];
