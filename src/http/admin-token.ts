import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const ADMIN_TOKEN_FILE = 'admin-token';

/** Constant-time comparison of two secrets of any length (both are hashed to equal-length digests first). */
export function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** GATEWAY_ADMIN_TOKEN when configured; else the one generated into the data directory, made on first use. */
export async function loadOrCreateAdminToken(
  configured: string | undefined,
  dataDir: string,
): Promise<string> {
  if (configured) return configured;
  const file = join(dataDir, ADMIN_TOKEN_FILE);
  const existing = await readAdminToken(dataDir);
  if (existing) return existing;
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const token = `gw-admin-${randomBytes(24).toString('base64url')}`;
  await writeFile(file, `${token}\n`, { mode: 0o600, flag: 'wx' }).catch(
    async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    },
  );
  return (await readAdminToken(dataDir)) ?? token;
}

export async function readAdminToken(dataDir: string): Promise<string | undefined> {
  try {
    return (await readFile(join(dataDir, ADMIN_TOKEN_FILE), 'utf8')).trim() || undefined;
  } catch {
    return undefined;
  }
}
