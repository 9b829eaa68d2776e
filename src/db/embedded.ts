import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { postgresBinaries, postgresUser, type RunAs } from './embedded-binaries.ts';

const run = promisify(execFile);

export interface EmbeddedPostgres {
  connectionString: string;
  /** True when this call created the cluster (an empty data directory). */
  fresh: boolean;
  /** True when this process started the server (false when it attached to one already running). */
  owned: boolean;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** The cluster lives in `<dataDir>/pg`; its password in `<dataDir>/pg-password`. */
  dataDir: string;
  /**
   * What to do when a server is already running on this data directory: `attach` (the CLI beside a running
   * gateway) or `restart` (a gateway starting after one was killed and left its PostgreSQL behind).
   */
  whenRunning: 'attach' | 'restart';
  /** Throwaway clusters for tests skip durability. */
  durable?: boolean;
  /**
   * One gateway's own store (the embedded default): a handful of connections and no replication, so fewer and
   * smaller server processes.
   */
  small?: boolean;
  log?: (line: string) => void;
}

const USER = 'gateway';

export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedPostgres> {
  const binaries = await postgresBinaries();
  const runAs = await postgresUser();
  const pgdata = join(options.dataDir, 'pg');
  await mkdir(options.dataDir, { recursive: true });
  // The postgres user must be able to reach its directory (mkdtemp makes 0700 folders).
  if (runAs.uid !== undefined) await chmod(options.dataDir, 0o755);

  const fresh = !(await exists(join(pgdata, 'PG_VERSION')));
  const password = fresh
    ? await initCluster(binaries.initdb, options.dataDir, pgdata, runAs)
    : await readPassword(options.dataDir);

  const running = await runningServer(pgdata);
  if (running && options.whenRunning === 'attach') {
    return { connectionString: url(password, running.port), fresh, owned: false, stop: async () => {} };
  }
  if (running) {
    options.log?.(`stopping a PostgreSQL (pid ${running.pid}) left running on ${pgdata}`);
    await run(binaries.pg_ctl, ['stop', '-D', pgdata, '-m', 'fast', '-w'], runAs).catch(() =>
      process.kill(running.pid, 'SIGQUIT'),
    );
    await waitUntilGone(running.pid);
  }
  await rm(join(pgdata, 'postmaster.pid'), { force: true });

  const port = await freePort();
  const flags = [
    '-D',
    pgdata,
    '-p',
    String(port),
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'unix_socket_directories=',
    // The embedded default is one gateway's store: its hot set (the log's head, the read models) is small, and
    // PostgreSQL's 128 MB of shared buffers would be most of its memory once every backend has touched them.
    '-c',
    'shared_buffers=32MB',
  ];
  if (options.small)
    flags.push(
      // The gateway's pools and a CLI attached beside it (audit, export) need about twenty.
      '-c',
      'max_connections=24',
      '-c',
      'autovacuum_max_workers=1',
      // No background workers at all: no parallel query, and no logical replication launcher (a process of its own).
      '-c',
      'max_worker_processes=0',
      '-c',
      'max_logical_replication_workers=0',
      '-c',
      'max_parallel_workers=0',
      '-c',
      'max_parallel_workers_per_gather=0',
      // The bundled binaries have no LLVM; said here so that a build with it never loads it into a backend.
      '-c',
      'jit=off',
      '-c',
      'huge_pages=off',
      // Half the general default: the hot set under load (the log's head, the read models' rows) fits, and every
      // backend maps the buffers it touches, so they count in each one's memory.
      '-c',
      'shared_buffers=16MB',
      // ANALYZE keeps its whole row sample in memory: 300 rows per unit of the target, so 30,000 at the default of
      // 100, and the events' rows carry their JSON. Autovacuum's ANALYZE of the events took a backend to 49 MB
      // and 350 ms of CPU; at 10 it takes 9 MB and 27 ms. Every query of the gateway is by key or on an index of
      // the account and time, which a coarser histogram plans the same way.
      '-c',
      'default_statistics_target=10',
      // Nothing replicates from the embedded store: minimal WAL, and no WAL sender slots.
      '-c',
      'wal_level=minimal',
      '-c',
      'max_wal_senders=0',
    );
  if (options.durable === false)
    flags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
  const connectionString = url(password, port);
  const launch = async (): Promise<ChildProcess> => {
    const child = spawn(binaries.postgres, flags, { ...runAs, stdio: ['ignore', 'ignore', 'pipe'] });
    let output = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4000);
    });
    await waitForConnections(connectionString, child, () => output);
    return child;
  };
  const supervisor = new Supervisor(launch, options.log);
  await supervisor.start();
  return { connectionString, fresh, owned: true, stop: () => supervisor.stop() };
}

const RESTART_BACKOFF_MS = [100, 250, 500, 1000, 2000];

/**
 * Keeps the gateway's own PostgreSQL running: when the postmaster exits without being asked to (killed, out of
 * memory), it is started again on the same data directory and port, so the connection string every pool holds
 * stays valid and the pools simply reconnect. PostgreSQL's own interlock (the shared-memory key in
 * postmaster.pid) refuses to start while backends of the dead postmaster still run; the attempts repeat, with a
 * growing pause, until they have gone.
 */
class Supervisor {
  private child: ChildProcess | undefined;
  private stopping = false;
  private restarting: Promise<void> | undefined;

  constructor(
    private readonly launch: () => Promise<ChildProcess>,
    private readonly log?: (line: string) => void,
  ) {}

  async start(): Promise<void> {
    this.watch(await this.launch());
  }

  private watch(child: ChildProcess): void {
    this.child = child;
    child.once('exit', (code, signal) => {
      if (this.stopping) return;
      this.log?.(`embedded PostgreSQL exited unexpectedly (${signal ?? `code ${code}`}); restarting it`);
      this.restarting = this.restart().finally(() => {
        this.restarting = undefined;
      });
    });
  }

  private async restart(): Promise<void> {
    for (let attempt = 0; !this.stopping; attempt++) {
      try {
        const child = await this.launch();
        if (this.stopping) return void (await stopChild(child));
        this.watch(child);
        this.log?.('embedded PostgreSQL restarted');
        return;
      } catch (error) {
        this.log?.(`embedded PostgreSQL failed to restart, retrying: ${String(error).slice(0, 500)}`);
        await sleep(RESTART_BACKOFF_MS[Math.min(attempt, RESTART_BACKOFF_MS.length - 1)] as number);
      }
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.restarting;
    if (this.child) await stopChild(this.child);
  }
}

async function initCluster(initdb: string, dataDir: string, pgdata: string, runAs: RunAs): Promise<string> {
  const password = randomBytes(18).toString('base64url');
  const passwordFile = join(dataDir, 'pg-password');
  await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  await rm(pgdata, { recursive: true, force: true });
  await mkdir(pgdata, { recursive: true, mode: 0o700 });
  const scratch = join(dataDir, `.pwfile-${process.pid}`);
  await writeFile(scratch, `${password}\n`, { mode: 0o600 });
  if (runAs.uid !== undefined && runAs.gid !== undefined) {
    await chown(pgdata, runAs.uid, runAs.gid);
    await chown(scratch, runAs.uid, runAs.gid);
  }
  try {
    await run(
      initdb,
      [
        `--pgdata=${pgdata}`,
        `--username=${USER}`,
        `--pwfile=${scratch}`,
        '--auth=scram-sha-256',
        '--encoding=UTF8',
        '--locale=C',
      ],
      { ...runAs, env: { ...process.env, LC_ALL: 'C' } },
    );
  } catch (error) {
    await rm(pgdata, { recursive: true, force: true });
    throw new Error(`initdb failed in ${pgdata}: ${(error as { stderr?: string }).stderr ?? String(error)}`);
  } finally {
    await rm(scratch, { force: true });
  }
  return password;
}

async function readPassword(dataDir: string): Promise<string> {
  return (await readFile(join(dataDir, 'pg-password'), 'utf8')).trim();
}

/** Reads postmaster.pid: line 1 is the pid, line 4 the port. */
async function runningServer(pgdata: string): Promise<{ pid: number; port: number } | undefined> {
  let lines: string[];
  try {
    lines = (await readFile(join(pgdata, 'postmaster.pid'), 'utf8')).split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return undefined;
  return { pid, port };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function waitUntilGone(pid: number): Promise<void> {
  for (let i = 0; i < 300 && isAlive(pid); i++) await sleep(50);
}

async function waitForConnections(
  connectionString: string,
  child: ChildProcess,
  output: () => string,
): Promise<void> {
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  for (let attempt = 0; attempt < 600; attempt++) {
    if (exited) throw new Error(`PostgreSQL exited during start-up:\n${output()}`);
    const client = new pg.Client({ connectionString });
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => undefined);
      await sleep(50);
    }
  }
  child.kill('SIGQUIT');
  throw new Error(`PostgreSQL did not accept connections within 30 s:\n${output()}`);
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    // SIGINT is PostgreSQL's "fast" shutdown: abort open transactions, checkpoint, exit.
    child.kill('SIGINT');
  });
}

function url(password: string, port: number): string {
  return `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
