/**
 * `npm run bench`: the gateway's overhead and throughput beside direct calls and Portkey's gateway, in one run
 * on one machine. See bench/README.md for what it measures and the settings.
 */
import { execFileSync } from 'node:child_process';
import { cpus, freemem, release, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { cacheStep, indexMicro } from './cache.ts';
import { type ChargeCheck, checkCharges } from './charges.ts';
import { costedStep, describeCost, PgProbe, type StepCost } from './cost.ts';
import {
  type ClosedLoopResult,
  closedLoop,
  type Endpoint,
  Ledger,
  type OpenLoopResult,
  openLoop,
} from './load.ts';
import { cleanupAll, type MemoryPeaks, MemorySampler } from './procs.ts';
import { type BenchResult, printReport, type TargetResult, writeResult } from './report.ts';
import { routerMicro, routingStep } from './routing.ts';
import { ALL_TARGETS, ROOT, type RunningTarget, startSimulator, type TargetSpec } from './targets.ts';

function num(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number`);
  return value;
}

function list(name: string, fallback: number[]): number[] {
  const raw = process.env[name];
  if (!raw) return fallback;
  return raw.split(',').map((part) => {
    const value = Number(part.trim());
    if (!Number.isFinite(value) || value <= 0) throw new Error(`${name}: ${part} is not a positive number`);
    return value;
  });
}

export const settings = {
  /** Each closed-loop (saturation) step. */
  seconds: num('BENCH_SECONDS', 3),
  connections: list('BENCH_CONNECTIONS', [1, 16, 64]),
  /** Each constant-rate step. */
  rateSeconds: num('BENCH_RATE_SECONDS', 5),
  rates: list('BENCH_RATES', [100, 500, 1000]),
  streamRate: num('BENCH_STREAM_RATE', 50),
  streamSeconds: num('BENCH_STREAM_SECONDS', 5),
  warmupSeconds: num('BENCH_WARMUP_SECONDS', 3),
  /** Between steps, so that one step's backlog (projections catching up) weighs less on the next. */
  pauseSeconds: num('BENCH_PAUSE_SECONDS', 1),
  /** How long a constant-rate step waits for its last answers before it gives up on them. */
  drainSeconds: num('BENCH_DRAIN_SECONDS', 10),
  openLoopConnections: num('BENCH_OPEN_CONNECTIONS', 256),
  upstreamLatencyMs: num('BENCH_UPSTREAM_LATENCY_MS', 0),
  streamChunkMs: num('BENCH_STREAM_CHUNK_MS', 0),
  chargeWaitSeconds: num('BENCH_CHARGE_WAIT_SECONDS', 120),
  /**
   * How long to wait, once the projections have caught up, before reading PostgreSQL's row counters: an idle
   * backend flushes its counts 10 s after its last transaction (bench/cost.ts).
   */
  pgSettleSeconds: num('BENCH_PG_SETTLE_SECONDS', 11),
  /**
   * Rest after start-up before the idle memory is read. V8 gives back the young generation that start-up grew
   * (16 MB a semi-space) only when its memory reducer runs, 8 s after the last full collection once allocation
   * has stopped: 13-19 s after the gateway's start on this VM.
   */
  idleSeconds: num('BENCH_IDLE_SECONDS', 30),
  /** Each half of the routing step (model auto, then a named model, twice), on gateway targets; 0 skips it. */
  routingSeconds: num('BENCH_ROUTING_SECONDS', 2),
  /** Each part of the cache step (skip, miss, hit at 1 and 16 connections), on gateway targets; 0 skips it. */
  cacheSeconds: num('BENCH_CACHE_SECONDS', 1),
  /** Gateway accounts the requests are spread over, one key each (read in targets.ts). */
  accounts: num('BENCH_ACCOUNTS', 1),
  targets: (process.env.BENCH_TARGETS ?? ALL_TARGETS.map((t) => t.id).join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
};

const MODEL = 'openai/gpt-4o-mini';
const messages = [{ role: 'user', content: 'hello' }];
// `cache: skip`: the same body again and again measures the path to the provider, not the response cache (the
// cache step does that); the other targets' upstream ignores the field.
const JSON_BODY = Buffer.from(JSON.stringify({ model: MODEL, messages, max_tokens: 16, cache: 'skip' }));
const STREAM_BODY = Buffer.from(
  JSON.stringify({ model: MODEL, messages, max_tokens: 16, stream: true, cache: 'skip' }),
);

const log = (line: string) => process.stderr.write(`${line}\n`);
const sleep = (seconds: number) => new Promise((r) => setTimeout(r, seconds * 1000));
const ms = (v: number | undefined) => (v === undefined ? '-' : v.toFixed(2));

async function measure(
  spec: TargetSpec,
  target: RunningTarget,
  ledger: Ledger,
): Promise<
  Pick<TargetResult, 'id' | 'label' | 'saturation' | 'cost' | 'open' | 'stream' | 'routing' | 'cache'>
> {
  const tag = `[${spec.id}]`;
  const endpoint: Endpoint = target.endpoint;
  // Refuse to measure a target that does not answer (a misconfiguration would otherwise look like a number).
  const probe = await closedLoop(endpoint, JSON_BODY, 1, 0.2, ledger);
  if (probe.ok === 0)
    throw new Error(`${spec.id} answers no request with 200: ${JSON.stringify(probe.failures)}`);
  const streamProbe = await openLoop(
    endpoint,
    STREAM_BODY,
    { rate: 10, seconds: 0.3, stream: true, drainSeconds: 5, maxConnections: 4 },
    ledger,
  );
  if (streamProbe.ok === 0) {
    throw new Error(`${spec.id} streams no complete answer: ${JSON.stringify(streamProbe.failures)}`);
  }

  if (settings.warmupSeconds > 0) {
    const warm = await closedLoop(endpoint, JSON_BODY, 16, settings.warmupSeconds, ledger);
    await openLoop(
      endpoint,
      STREAM_BODY,
      { rate: 100, seconds: 1, stream: true, drainSeconds: settings.drainSeconds, maxConnections: 64 },
      ledger,
    );
    log(`${tag} warm-up: ${warm.rps.toFixed(0)} req/s at 16 connections`);
    await sleep(settings.pauseSeconds);
  }

  const open: OpenLoopResult[] = [];
  for (const rate of settings.rates) {
    const result = await openLoop(
      endpoint,
      JSON_BODY,
      {
        rate,
        seconds: settings.rateSeconds,
        stream: false,
        drainSeconds: settings.drainSeconds,
        maxConnections: settings.openLoopConnections,
      },
      ledger,
    );
    open.push(result);
    const l = result.latencyMs;
    log(
      `${tag} ${rate}/s: p50 ${ms(l?.p50)} p90 ${ms(l?.p90)} p99 ${ms(l?.p99)} ms` +
        `${result.keptUp ? '' : ` — FAILED (${result.verdict})`}`,
    );
    await sleep(settings.pauseSeconds);
  }

  const stream = await openLoop(
    endpoint,
    STREAM_BODY,
    {
      rate: settings.streamRate,
      seconds: settings.streamSeconds,
      stream: true,
      drainSeconds: settings.drainSeconds,
      maxConnections: settings.openLoopConnections,
    },
    ledger,
  );
  log(
    `${tag} stream ${settings.streamRate}/s: first byte p50 ${ms(stream.firstByteMs?.p50)} p99 ` +
      `${ms(stream.firstByteMs?.p99)}, last byte p50 ${ms(stream.latencyMs?.p50)} p99 ${ms(stream.latencyMs?.p99)} ms` +
      `${stream.keptUp ? '' : ` — FAILED (${stream.verdict})`}`,
  );
  await sleep(settings.pauseSeconds);

  const saturation: ClosedLoopResult[] = [];
  const cost: StepCost[] = [];
  // On gateway targets: PostgreSQL's counters, its event log and the projections' checkpoints (bench/cost.ts).
  const pgProbe = target.charges ? await PgProbe.open(await target.charges()) : undefined;
  try {
    for (const connections of settings.connections) {
      const step = await costedStep(
        target,
        pgProbe,
        connections,
        { settleSeconds: settings.pgSettleSeconds, catchUpSeconds: settings.chargeWaitSeconds },
        () => closedLoop(endpoint, JSON_BODY, connections, settings.seconds, ledger),
      );
      const result = step.result;
      saturation.push(result);
      cost.push(step.cost);
      log(
        `${tag} ${connections} connection${connections === 1 ? '' : 's'}: ${result.rps.toFixed(0)} req/s` +
          `${result.errors ? ` (${result.errors} errors: ${JSON.stringify(result.failures)})` : ''}; ` +
          describeCost(step.cost),
      );
      await sleep(settings.pauseSeconds);
    }
  } finally {
    await pgProbe?.close();
  }
  const routing =
    spec.id.startsWith('gateway') && settings.routingSeconds > 0
      ? await routingStep(endpoint, ledger, settings.routingSeconds)
      : undefined;
  if (routing) {
    log(
      `${tag} routing, one request at a time, alternated: named model p50 ${ms(routing.named?.p50)} p90 ` +
        `${ms(routing.named?.p90)} ms; auto p50 ${ms(routing.auto?.p50)} p90 ${ms(routing.auto?.p90)} ms` +
        `${routing.errors ? ` (${routing.errors} errors)` : ''}`,
    );
  }
  const cache =
    spec.id.startsWith('gateway') && settings.cacheSeconds > 0
      ? await cacheStep(endpoint, ledger, settings.cacheSeconds)
      : undefined;
  if (cache) {
    for (const [at, connections] of cache.hit.map((h) => h.connections).entries()) {
      const line = (name: string, r: (typeof cache.hit)[number] | undefined) =>
        `${name} ${r?.rps.toFixed(0)} req/s p50 ${ms(r?.latencyMs?.p50)} p99 ${ms(r?.latencyMs?.p99)} ms`;
      log(
        `${tag} cache, ${connections} connection${connections === 1 ? '' : 's'}: ${line('skip', cache.skip[at])}; ` +
          `${line('miss', cache.miss[at])}; ${line('hit', cache.hit[at])}`,
      );
    }
  }
  return {
    id: spec.id,
    label: spec.label,
    saturation,
    cost,
    open,
    stream,
    ...(routing && { routing }),
    ...(cache && { cache }),
  };
}

async function main(): Promise<void> {
  const started = performance.now();
  const startedAt = new Date();
  const runId = startedAt.toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
  const specs = settings.targets.map((id) => {
    const spec = ALL_TARGETS.find((t) => t.id === id);
    if (!spec) throw new Error(`unknown target ${id} (known: ${ALL_TARGETS.map((t) => t.id).join(', ')})`);
    return spec;
  });
  log(`bench ${runId}: targets ${specs.map((s) => s.id).join(', ')}`);
  const router = await routerMicro();
  log(
    `router, in process: complexity ${router.complexityShortUs} µs (short prompt) / ${router.complexityLongUs} µs ` +
      `(16,000 characters); decision among ${router.candidates} candidates ${router.decisionUs} µs, ` +
      `with the prompt counted ${router.countAndDecisionUs} µs`,
  );
  const cacheIndex = indexMicro();
  log(
    `cache, in process: a semantic lookup among ${cacheIndex.entries} entries of one tenant: ` +
      cacheIndex.lookups
        .map(
          (l) => `${l.ms} ms (${l.hitMs} ms finding one) at ${l.dimensions} dimensions (${l.megabytes} MB)`,
        )
        .join(', '),
  );
  const sampler = new MemorySampler(100);
  const simulator = await startSimulator({
    latencyMs: settings.upstreamLatencyMs,
    chunkMs: settings.streamChunkMs,
  });
  log(`simulator at ${simulator.url}`);
  const results: TargetResult[] = [];
  const failures: Record<string, string> = {};
  try {
    for (const spec of specs) {
      const t0 = performance.now();
      let target: RunningTarget | undefined;
      try {
        log(`[${spec.id}] starting`);
        target = await spec.start(simulator);
        sampler.track({
          target: target.pids,
          'target/alone': target.pids,
          ...(target.servicePids && { services: target.servicePids }),
        });
        // What the target holds just after start-up (account set-up and 0.5 s of rest), then at rest.
        await sleep(0.5);
        const started: Record<string, MemoryPeaks> = await sampler.peaks();
        await sleep(settings.idleSeconds);
        const idle: Record<string, MemoryPeaks> = await sampler.peaks();
        const ledger = new Ledger(`b${runId}-${spec.id}-`);
        const servedBefore = await simulator.served();
        const measured = await measure(spec, target, ledger);
        let charges: ChargeCheck | undefined;
        if (target.charges) {
          charges = await checkCharges(await target.charges(), ledger, {
            maxWaitSeconds: settings.chargeWaitSeconds,
            stableSeconds: 10,
          });
          log(
            `[${spec.id}] billing: ${charges.passed ? 'pass' : 'FAIL'}: ${charges.answered200} answered 200, ` +
              `${charges.chargedOnce} charged once, ${charges.missing} missing, ${charges.duplicated} duplicated ` +
              `(read model caught up in ${charges.catchUpSeconds.toFixed(1)} s)`,
          );
        }
        const peaks: Record<string, MemoryPeaks> = await sampler.peaks();
        const upstreamCalls = (await simulator.served()) - servedBefore;
        results.push({
          ...measured,
          requests: ledger.sent,
          upstreamCalls,
          memory: peaks.target as MemoryPeaks,
          rootMemory: peaks['target/alone'] as MemoryPeaks,
          servicesMemory: peaks.services,
          idleRssBytes: (idle.target?.lastRssBytes ?? 0) + (idle.services?.lastRssBytes ?? 0),
          idleRootRssBytes: idle['target/alone']?.lastRssBytes ?? 0,
          startedRootRssBytes: started['target/alone']?.lastRssBytes ?? 0,
          charges,
          seconds: (performance.now() - t0) / 1000,
        });
        log(
          `[${spec.id}] peak RSS ${((peaks.target?.peakRssBytes ?? 0) / 2 ** 20).toFixed(0)} MB; ` +
            `${ledger.sent} requests in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
        );
      } catch (error) {
        failures[spec.id] = error instanceof Error ? error.message : String(error);
        log(`[${spec.id}] FAILED: ${failures[spec.id]}`);
      } finally {
        await target?.stop().catch((error) => log(`[${spec.id}] stop failed: ${String(error)}`));
      }
    }
  } finally {
    await sampler.close();
    await simulator.child.stop(5_000);
    await cleanupAll();
  }

  const result: BenchResult = {
    startedAt: startedAt.toISOString(),
    wallSeconds: (performance.now() - started) / 1000,
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
      freeMemoryGiB: Math.round((freemem() / 2 ** 30) * 10) / 10,
      kernel: release(),
      node: process.version,
      loadGenerator: 'in-process (undici), on the same cores as the targets',
    },
    source: sourceVersion(),
    settings,
    body: JSON.parse(JSON_BODY.toString()),
    router,
    cacheIndex,
    targets: results,
    failures,
  };
  const file = await writeResult(result);
  printReport(result);
  log(`\nresults: ${file}; wall time ${result.wallSeconds.toFixed(0)} s`);
  const billingFailed = results.some((r) => r.charges && !r.charges.passed);
  if (Object.keys(failures).length > 0 || billingFailed) process.exitCode = 1;
}

/** The commit measured, and whether the work tree had changes to it. */
function sourceVersion(): string {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = git('status', '--porcelain', '--', 'src', 'commands', 'events', 'projections') !== '';
    return `${git('rev-parse', '--short', 'HEAD')}${dirty ? ' (with uncommitted changes)' : ''}`;
  } catch {
    return 'unknown';
  }
}

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping everything the bench started`);
    void cleanupAll().finally(() => process.exit(130));
  });
}

main().catch(async (error) => {
  log(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  await cleanupAll();
  process.exit(1);
});
