// Compiles the gateway to JavaScript in dist/ (what `npm start` runs) and copies the files the code reads beside
// itself: the dashboard's public files, and package.json (its version, and "type": "module" for dist/).
import { spawnSync } from 'node:child_process';
import { copyFile, cp, mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';

export const ROOT = join(import.meta.dirname, '..');
export const DIST = join(ROOT, 'dist');
const SOURCES = ['src', 'events', 'commands', 'projections'];
const STAMP = join(DIST, '.built');

async function* files(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else yield path;
  }
}

/** The newest modification among the sources and the build's settings. */
async function newestSource() {
  let newest = 0;
  for (const name of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']) {
    newest = Math.max(newest, (await stat(join(ROOT, name)).catch(() => ({ mtimeMs: 0 }))).mtimeMs);
  }
  for (const source of SOURCES) {
    for await (const file of files(join(ROOT, source))) newest = Math.max(newest, (await stat(file)).mtimeMs);
  }
  return newest;
}

/** Whether dist/ was built from the sources as they are now. */
export async function isFresh() {
  const built = await stat(STAMP).catch(() => undefined);
  return built !== undefined && built.mtimeMs >= (await newestSource());
}

/** The TypeScript compiler, when it is installed (a development dependency). */
export function compiler() {
  try {
    const manifest = createRequire(join(ROOT, 'package.json')).resolve('typescript/package.json');
    return join(dirname(manifest), 'bin', 'tsc');
  } catch {
    return undefined;
  }
}

export async function build() {
  const tsc = compiler();
  if (!tsc) throw new Error('TypeScript is not installed (npm install without --omit=dev)');
  const started = Date.now();
  // Type errors do not stop the emit (types are `npm run typecheck`'s business, as with tsx); a missing output does.
  spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'ignore' });
  await stat(join(DIST, 'src', 'server.js'));
  for (const source of SOURCES) {
    for await (const file of files(join(ROOT, source))) {
      if (file.endsWith('.ts')) continue;
      const target = join(DIST, relative(ROOT, file));
      await mkdir(dirname(target), { recursive: true });
      await cp(file, target);
    }
  }
  await copyFile(join(ROOT, 'package.json'), join(DIST, 'package.json'));
  await writeFile(STAMP, `${new Date().toISOString()}\n`);
  return Date.now() - started;
}

if (process.argv[1] === import.meta.filename) {
  const ms = await build();
  process.stdout.write(`built dist/ in ${ms} ms\n`);
}
