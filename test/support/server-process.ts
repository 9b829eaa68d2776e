import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

export interface ServerProcess {
  child: ChildProcess;
  /** Signals the gateway (and, under npm, its whole process group). */
  signal(name: NodeJS.Signals): void;
  url: string;
  /** Lines printed on stdout so far. */
  stdout: string[];
  stderr(): string;
  exited: Promise<number | null>;
}

/** Starts the gateway as its own process (`npm start`, or node directly so that a signal reaches it alone). */
export async function spawnServer(
  env: Record<string, string>,
  how: 'npm-start' | 'node' = 'node',
): Promise<ServerProcess> {
  const [command, args] =
    how === 'npm-start'
      ? ['npm', ['start', '--silent']]
      : [process.execPath, ['--import', 'tsx', join(ROOT, 'src/server.ts')]];
  const child = spawn(command as string, args as string[], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // npm start runs in a process group of its own, so that a signal can reach the gateway under npm as a
    // terminal's Ctrl-C would.
    detached: how === 'npm-start',
  });
  const stdout: string[] = [];
  let errors = '';
  let partial = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    stdout.push(...lines);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start:\n${errors}`)), 60_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      errors += chunk.toString();
      const match = /gateway listening on (\S+)/.exec(errors);
      if (match) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code} during start:\n${errors}`));
    });
  });
  // The key line follows the listening line; give stdout a moment to deliver it.
  await new Promise((r) => setTimeout(r, 100));
  const signal = (name: NodeJS.Signals) => {
    try {
      if (how === 'npm-start' && child.pid) process.kill(-child.pid, name);
      else child.kill(name);
    } catch (error) {
      // The process (group) has already gone.
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  };
  return { child, signal, url, stdout, stderr: () => errors, exited };
}
