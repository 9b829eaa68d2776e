import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const LOCK_FILE = 'gateway.pid';

/**
 * One gateway per embedded data directory. A lock left by a gateway that was killed names a dead process and
 * is taken over; one naming a live process refuses the start.
 */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, LOCK_FILE);
  const holder = Number((await readFile(file, 'utf8').catch(() => '')).trim());
  if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && alive(holder)) {
    throw new Error(`another gateway (pid ${holder}) is running on ${dataDir}`);
  }
  await writeFile(file, `${process.pid}\n`, { mode: 0o600 });
  return async () => {
    const current = Number((await readFile(file, 'utf8').catch(() => '')).trim());
    if (current === process.pid) await rm(file, { force: true });
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
