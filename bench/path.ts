/**
 * `npm run bench:path`: which source files one served request runs (issue 33: "the non-streamed chat path visits
 * at most half today's files"). A gateway in this process on the embedded default, the bench's simulator as its
 * OpenAI upstream; after a warm-up (so that lazy imports and first-request set-up are not counted), V8's precise
 * coverage counts the functions that run from the request's arrival at the server to its response's close. A file
 * counts when one of its functions ran.
 *
 * What is not the request's own work is kept out where it can be: the client here runs outside the window, the
 * workers' timers are set beyond the run, and the read models, which fold a request's events while it is still
 * being answered, are stopped once warmed up. Other subscribers (the live state's feed, the shadow replays') still
 * share the event loop, so each kind is measured PATH_ROUNDS times with a pause between: the path is the files
 * every round ran; those only some rounds ran are listed apart.
 *
 *   PATH_ROUNDS    measured requests per kind (default 15)
 *   PATH_PAUSE_MS  wait before each measured request, for the previous one's background work (default 400)
 *   PATH_JSON=1    print the figures as JSON instead
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Session } from 'node:inspector';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config.ts';
import { startRuntime } from '../src/runtime.ts';
import { cleanupAll } from './procs.ts';
import { ROOT, startSimulator } from './targets.ts';

const ROUNDS = Number(process.env.PATH_ROUNDS ?? 15) || 15;
const PAUSE_MS = Number(process.env.PATH_PAUSE_MS ?? 400);
const ADMIN_TOKEN = 'bench-path-admin-token-0123456789';
/** The gateway's own code: the top-level folders of the repository that the server runs. */
const SOURCE_ROOTS = ['src/', 'commands/', 'events/', 'projections/'];

const chat = (extra: Record<string, unknown>) => ({
  model: 'openai/gpt-4o-mini',
  messages: [{ role: 'user', content: 'hello' }],
  max_tokens: 16,
  ...extra,
});

/** The requests measured: the bench's own bodies (`npm run bench`), and a hit of the response cache. */
const KINDS = [
  { name: 'chat, not streamed, cache: skip', body: chat({ cache: 'skip' }) },
  { name: 'chat, streamed, cache: skip', body: chat({ cache: 'skip', stream: true }) },
  // `force` stores whatever the temperature: the warm-up's first request stores, every later one hits.
  { name: 'chat, not streamed, cache hit', body: chat({ cache: 'force' }), hit: true },
] as const;

type Coverage = { url: string; functions: { ranges: { count: number }[] }[] }[];

/**
 * Takes the coverage (which resets the counts) at once: an in-process session answers synchronously, so nothing
 * else runs between the moment chosen and the reading.
 */
function takeNow(session: Session): Coverage {
  let taken: Coverage | undefined;
  session.post('Profiler.takePreciseCoverage', (error, answer) => {
    if (error) throw error;
    taken = answer.result as Coverage;
  });
  if (!taken) throw new Error('the inspector did not answer synchronously');
  return taken;
}

/** The repository's source files any of whose functions ran in the coverage taken. */
function filesRun(result: Coverage): Set<string> {
  const files = new Set<string>();
  for (const script of result) {
    // ES modules are named by URL; a module tsx loads as CommonJS would be named by its path.
    const file = script.url.startsWith('file:') ? fileURLToPath(script.url) : script.url;
    if (!file.startsWith('/')) continue;
    const path = relative(ROOT, file);
    if (!SOURCE_ROOTS.some((root) => path.startsWith(root))) continue;
    // A function's first range is the whole function, counted per call.
    if (script.functions.some((f) => (f.ranges[0]?.count ?? 0) > 0)) files.add(path);
  }
  return files;
}

const folders = (files: Iterable<string>) => new Set([...files].map((file) => dirname(file)));

async function main() {
  const simulator = await startSimulator({ latencyMs: 0, chunkMs: 0 });
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-bench-path-'));
  // The embedded default (no DATABASE_URL), configured as the bench's gateway target is.
  const env = {
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
    LOG_LEVEL: 'silent',
    PORT: '0',
    OPENAI_API_KEY: 'bench',
    OPENAI_BASE_URL: `${simulator.url}/v1`,
    GATEWAY_DEMO_CREDIT_CENTS: '0',
  };
  // The workers' timers are set beyond the run: their rounds are not a request's work.
  const hour = 3_600_000;
  const runtime = await startRuntime(loadConfig(env), {
    log: () => {},
    workerIntervalsMs: {
      expiry: hour,
      summary: hour,
      jobs: hour,
      webhooks: hour,
      batches: hour,
      evals: hour,
      reconcile: hour,
    },
  });
  try {
    const url = await runtime.app.listen({ port: 0, host: '127.0.0.1' });
    const key = await benchKey(url);
    const send = async (body: unknown) => {
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`chat answered ${response.status}: ${text}`);
      return response.headers.get('x-cache-status');
    };
    for (let i = 0; i < 20; i++) for (const kind of KINDS) await send(kind.body);

    // The read models fold each request's events while it is still being answered (a stream's hold is appended
    // long before its end): they are stopped for the measured requests, which do not read them.
    await runtime.runner.stop();
    const session = new Session();
    session.connect();
    const post = (method: string, params?: object) =>
      new Promise<void>((resolve, reject) =>
        session.post(method, params, (error) => (error ? reject(error) : resolve())),
      );
    await post('Profiler.enable');
    await post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
    // The window is the server's: from the request's arrival (the counts reset) to its response's close, after the
    // last byte and the response hooks, so that neither the client here nor what runs later is counted.
    let measure: ((files: Set<string>) => void) | undefined;
    runtime.app.server.prependListener('request', (_request: IncomingMessage, response: ServerResponse) => {
      const done = measure;
      if (!done) return;
      measure = undefined;
      takeNow(session);
      response.once('close', () => done(filesRun(takeNow(session))));
    });
    const report = [];
    for (const kind of KINDS) {
      const rounds: Set<string>[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
        const measured = new Promise<Set<string>>((resolve) => {
          measure = resolve;
        });
        const status = await send(kind.body);
        rounds.push(await measured);
        const expected = 'hit' in kind ? 'hit' : 'skip';
        if (!status?.startsWith(expected))
          throw new Error(`${kind.name}: X-Cache-Status ${status}, not ${expected}`);
      }
      const every = [...(rounds[0] ?? [])].filter((file) => rounds.every((r) => r.has(file))).sort();
      const some = [...new Set(rounds.flatMap((r) => [...r]))].filter((file) => !every.includes(file)).sort();
      report.push({ kind: kind.name, files: every, folders: [...folders(every)].sort(), someRounds: some });
    }
    await post('Profiler.stopPreciseCoverage');
    session.disconnect();
    print(report);
  } finally {
    await runtime.close();
    await cleanupAll();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** An account with ample credit and no practical rate limit, as the bench's gateway target makes. */
async function benchKey(url: string): Promise<string> {
  const admin = async (path: string, body: unknown) => {
    const response = await fetch(`${url}/admin${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (response.status !== 200) throw new Error(`POST /admin${path}: ${response.status}`);
    return (await response.json()) as Record<string, string>;
  };
  const { account_id: accountId, key } = await admin('/accounts', { name: 'bench-path' });
  if (!accountId || !key) throw new Error('POST /admin/accounts gave no account or key');
  await admin(`/accounts/${accountId}/top-ups`, { cents: 1_000_000, reference: 'bench-path' });
  await admin(`/accounts/${accountId}/settings`, { rate_limit_rpm: 1_000_000 });
  return key;
}

function print(report: { kind: string; files: string[]; folders: string[]; someRounds: string[] }[]) {
  // tsx compiles in memory and keeps each module's own URL: every name must be a file of the repository.
  const unknown = report
    .flatMap((r) => [...r.files, ...r.someRounds])
    .filter((f) => !existsSync(join(ROOT, f)));
  if (unknown.length > 0) throw new Error(`coverage named files that do not exist: ${unknown.join(', ')}`);
  if (process.env.PATH_JSON) {
    process.stdout.write(`${JSON.stringify({ rounds: ROUNDS, report }, null, 2)}\n`);
    return;
  }
  const inSrc = (files: string[]) => files.filter((f) => f.startsWith('src/'));
  for (const r of report) {
    const src = inSrc(r.files);
    process.stdout.write(
      `\n${r.kind}: ${src.length} files in ${folders(src).size} folders of src/` +
        ` (${r.files.length} files in ${r.folders.length} folders with commands/, events/, projections/)\n`,
    );
    for (const folder of r.folders) {
      const names = r.files.filter((f) => dirname(f) === folder).map((f) => f.slice(folder.length + 1));
      process.stdout.write(`  ${folder}/ (${names.length}): ${names.join(', ')}\n`);
    }
    if (r.someRounds.length > 0)
      process.stdout.write(`  in some of the ${ROUNDS} rounds only: ${r.someRounds.join(', ')}\n`);
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void cleanupAll().finally(() => process.exit(130));
  });
}
await main();
