/**
 * The bench's child processes: starting them with their output drained, stopping them (SIGTERM, then SIGKILL),
 * stopping every one still running when the bench ends or fails, walking process trees and sampling their memory.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

export interface Child {
  process: ChildProcess;
  pid: number;
  /** The last few KB of stdout and stderr together, for error messages. */
  output(): string;
  /** Resolves with the first line matching, or rejects when the process exits or the time runs out. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray>;
  exited: Promise<void>;
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<Child>();
/** Cleanups besides child processes (a PostgreSQL the bench started, temporary folders). */
const cleanups = new Set<() => Promise<void>>();

export function spawnChild(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; name: string },
): Child {
  const proc = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (proc.pid === undefined) throw new Error(`could not start ${options.name}`);
  let tail = '';
  const waiters: { pattern: RegExp; resolve: (m: RegExpExecArray) => void }[] = [];
  const onData = (chunk: Buffer) => {
    const text = chunk.toString();
    tail = (tail + text).slice(-8000);
    for (let i = waiters.length - 1; i >= 0; i--) {
      const waiter = waiters[i] as (typeof waiters)[number];
      const match = waiter.pattern.exec(tail);
      if (match) {
        waiters.splice(i, 1);
        waiter.resolve(match);
      }
    }
  };
  proc.stdout?.on('data', onData);
  proc.stderr?.on('data', onData);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const child: Child = {
    process: proc,
    pid: proc.pid,
    output: () => tail,
    exited,
    waitFor(pattern, timeoutMs) {
      const already = pattern.exec(tail);
      if (already) return Promise.resolve(already);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(new Error(`${options.name} did not print ${pattern} within ${timeoutMs} ms:\n${tail}`)),
          timeoutMs,
        );
        waiters.push({
          pattern,
          resolve: (match) => {
            clearTimeout(timer);
            resolve(match);
          },
        });
        void exited.then(() => {
          clearTimeout(timer);
          reject(new Error(`${options.name} exited (${proc.exitCode ?? proc.signalCode}):\n${tail}`));
        });
      });
    },
    async stop(graceMs = 15_000) {
      running.delete(child);
      await terminate(proc, graceMs);
    },
  };
  running.add(child);
  return child;
}

function alive(proc: ChildProcess): boolean {
  return proc.exitCode === null && proc.signalCode === null;
}

/** SIGTERM, then SIGKILL when it has not exited within the grace period. */
export async function terminate(proc: ChildProcess, graceMs: number): Promise<void> {
  if (!alive(proc)) return;
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  proc.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    exited.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), graceMs);
    }),
  ]);
  clearTimeout(timer);
  if (timedOut && alive(proc)) {
    proc.kill('SIGKILL');
    await exited;
  }
}

/** Sends a signal to a pid the bench did not spawn itself (a PostgreSQL left by a killed gateway). */
export async function terminatePid(pid: number, graceMs: number, first: NodeJS.Signals = 'SIGTERM') {
  const isAlive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
  };
  if (!isAlive()) return;
  try {
    process.kill(pid, first);
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (isAlive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (isAlive()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
}

export function onCleanup(cleanup: () => Promise<void>): () => void {
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}

/** Stops every child still running and runs every registered cleanup, newest first. */
export async function cleanupAll(): Promise<void> {
  await Promise.allSettled([...running].map((child) => child.stop(5_000)));
  for (const cleanup of [...cleanups].reverse()) {
    cleanups.delete(cleanup);
    await cleanup().catch(() => undefined);
  }
}

/** The direct children of a process, from every one of its threads. */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  let tasks: string[];
  try {
    tasks = readTasks(pid);
  } catch {
    return out;
  }
  for (const task of tasks) {
    try {
      const text = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (text) for (const c of text.split(' ')) out.push(Number(c));
    } catch {}
  }
  return out;
}

/** Every process of the trees under `roots`, roots included. */
export function treeOf(roots: number[]): number[] {
  const seen = new Set<number>();
  const todo = [...roots];
  while (todo.length > 0) {
    const pid = todo.pop() as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    todo.push(...childrenOf(pid));
  }
  return [...seen];
}

function readTasks(pid: number): string[] {
  return readdirSync(`/proc/${pid}/task`);
}

export function commandName(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

export interface MemoryPeaks {
  /** Highest sum of VmRSS over the tree, in bytes (shared pages counted once per process). */
  peakRssBytes: number;
  /** Highest sum of Pss (proportional set size: shared pages split among their users), in bytes. */
  peakPssBytes: number;
  /** The RSS sum at the last sample. */
  lastRssBytes: number;
  /** Most processes seen in the tree at once. */
  maxProcesses: number;
  samples: number;
}

/**
 * Samples the memory of process trees in a worker thread (so that reading /proc never stalls the load
 * generator's event loop): VmRSS of every process in each tree every `intervalMs`, Pss every tenth sample.
 */
export class MemorySampler {
  private readonly worker: Worker;
  private nextId = 0;
  private readonly pending = new Map<number, (value: Record<string, MemoryPeaks>) => void>();

  constructor(intervalMs = 100) {
    this.worker = new Worker(SAMPLER_SOURCE, { eval: true, workerData: { intervalMs } });
    this.worker.on('message', (message: { id: number; peaks: Record<string, MemoryPeaks> }) => {
      this.pending.get(message.id)?.(message.peaks);
      this.pending.delete(message.id);
    });
    this.worker.unref();
  }

  /**
   * Starts sampling the named groups of trees (each a list of root pids), forgetting earlier peaks. A group
   * whose name ends in `/alone` counts its roots only, not their descendants.
   */
  track(groups: Record<string, number[]>): void {
    this.worker.postMessage({ cmd: 'track', groups });
  }

  /** The peaks so far of every group. */
  peaks(): Promise<Record<string, MemoryPeaks>> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.worker.postMessage({ cmd: 'peaks', id });
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}

const SAMPLER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync, readdirSync } = require('node:fs');
let groups = {};
let peaks = {};
let tick = 0;
function children(pid) {
  const out = [];
  let tasks = [];
  try { tasks = readdirSync('/proc/' + pid + '/task'); } catch { return out; }
  for (const t of tasks) {
    try {
      const text = readFileSync('/proc/' + pid + '/task/' + t + '/children', 'utf8').trim();
      if (text) for (const c of text.split(' ')) out.push(Number(c));
    } catch {}
  }
  return out;
}
function tree(roots) {
  const seen = new Set();
  const todo = [...roots];
  while (todo.length) {
    const pid = todo.pop();
    if (seen.has(pid)) continue;
    seen.add(pid);
    todo.push(...children(pid));
  }
  return [...seen];
}
function field(text, name) {
  const at = text.indexOf(name + ':');
  if (at < 0) return 0;
  return Number(/\\d+/.exec(text.slice(at + name.length + 1))[0]) * 1024;
}
function sample() {
  const withPss = tick++ % 10 === 0;
  for (const [name, roots] of Object.entries(groups)) {
    let rss = 0, pss = 0, n = 0;
    for (const pid of name.endsWith('/alone') ? roots : tree(roots)) {
      try {
        rss += field(readFileSync('/proc/' + pid + '/status', 'utf8'), 'VmRSS');
        n++;
        if (withPss) pss += field(readFileSync('/proc/' + pid + '/smaps_rollup', 'utf8'), 'Pss');
      } catch {}
    }
    const p = peaks[name];
    if (n === 0) continue;
    p.samples++;
    p.lastRssBytes = rss;
    if (rss > p.peakRssBytes) p.peakRssBytes = rss;
    if (withPss && pss > p.peakPssBytes) p.peakPssBytes = pss;
    if (n > p.maxProcesses) p.maxProcesses = n;
  }
}
setInterval(sample, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m.cmd === 'track') {
    groups = m.groups;
    peaks = {};
    tick = 0;
    for (const name of Object.keys(groups)) {
      peaks[name] = { peakRssBytes: 0, peakPssBytes: 0, lastRssBytes: 0, maxProcesses: 0, samples: 0 };
    }
    sample();
  } else if (m.cmd === 'peaks') {
    sample();
    parentPort.postMessage({ id: m.id, peaks });
  }
});
`;
