import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SdkWorld, startSdkWorld } from './world.ts';

// The official Python SDKs (openai, anthropic) against a gateway started here: a pytest suite in this folder, in
// a virtualenv made once and kept under node_modules/.cache (remade when requirements.txt changes).
const here = fileURLToPath(new URL('.', import.meta.url));
const root = fileURLToPath(new URL('../..', import.meta.url));
const venv = `${root}node_modules/.cache/python-sdk`;
const python = `${venv}/bin/python`;
const requirements = `${here}requirements.txt`;
const stamp = `${venv}/requirements.sha256`;

interface Run {
  code: number | null;
  output: string;
}

/** Runs a command without blocking the loop (the gateway under test lives in this process). */
function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: here, env });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', (error) => resolve({ code: -1, output: `${output}${String(error)}` }));
    child.on('close', (code) => resolve({ code, output }));
  });
}

/**
 * Where pip finds packages: PIP_INDEX_URL when set; else a local mirror of PyPI under /opt/pypi when the machine
 * has one (a build machine without the internet); else PyPI.
 */
function pipEnv(): NodeJS.ProcessEnv {
  if (process.env.PIP_INDEX_URL || !existsSync('/opt/pypi/simple')) return process.env;
  const extra = existsSync('/opt/pypi-more/simple') ? 'file:///opt/pypi-more/simple' : '';
  return { ...process.env, PIP_INDEX_URL: 'file:///opt/pypi/simple', PIP_EXTRA_INDEX_URL: extra };
}

async function ensureVenv(): Promise<void> {
  const wanted = createHash('sha256')
    .update(await readFile(requirements))
    .digest('hex');
  const have = await readFile(stamp, 'utf8').catch(() => '');
  if (have === wanted && existsSync(python)) return;
  await rm(venv, { recursive: true, force: true });
  await mkdir(`${root}node_modules/.cache`, { recursive: true });
  const made = await run('python3', ['-m', 'venv', venv]);
  if (made.code !== 0) throw new Error(`python3 -m venv failed:\n${made.output}`);
  const installed = await run(
    python,
    ['-m', 'pip', 'install', '--disable-pip-version-check', '-q', '-r', requirements],
    pipEnv(),
  );
  if (installed.code !== 0) throw new Error(`pip install failed:\n${installed.output}`);
  await writeFile(stamp, wanted);
}

let world: SdkWorld;
beforeAll(async () => {
  [world] = await Promise.all([startSdkWorld(), ensureVenv()]);
}, 180_000);
afterAll(async () => world?.close());

describe('the official Python SDKs', () => {
  it('pass the pytest suite: files, batches, jobs, sub-accounts, the webhook secret, chat, errors, messages', async () => {
    const result = await run(python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', here], {
      ...process.env,
      GATEWAY_URL: world.gateway.url,
      GATEWAY_KEY: world.key,
      PYTHONDONTWRITEBYTECODE: '1',
    });
    expect(result.output).toMatch(/\d+ passed/);
    expect(result.code, result.output).toBe(0);
  }, 60_000);
});
