/** The bench's table on stdout and its JSON under bench/results/. */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CacheStep, IndexMicro } from './cache.ts';
import type { ChargeCheck } from './charges.ts';
import { cpuMsPerRequest, type StepCost } from './cost.ts';
import { costRows, goalRows, isGateway, judged } from './goals.ts';
import type { ClosedLoopResult, OpenLoopResult, Percentiles } from './load.ts';
import type { MemoryPeaks } from './procs.ts';
import type { RouterMicro, RoutingStep } from './routing.ts';
import { ROOT } from './targets.ts';

export interface TargetResult {
  id: string;
  label: string;
  saturation: ClosedLoopResult[];
  /** What each saturation step cost: CPU, and at 16 connections PostgreSQL's row writes (bench/cost.ts). */
  cost?: StepCost[];
  open: OpenLoopResult[];
  stream: OpenLoopResult;
  /** Requests sent to this target in all, warm-up included. */
  requests: number;
  /** Completions the simulator served meanwhile. */
  upstreamCalls: number;
  /** The target's process tree (the gateway with its embedded PostgreSQL). */
  memory: MemoryPeaks;
  /** The target's own process (the gateway's node without its PostgreSQL). */
  rootMemory: MemoryPeaks;
  /** RSS of the target's tree (and its services) at rest after start-up (BENCH_IDLE_SECONDS), before any load. */
  idleRssBytes: number;
  /** RSS of the target's own process at rest after start-up, before any load. */
  idleRootRssBytes: number;
  /** RSS of the target's own process 0.5 s after start-up. */
  startedRootRssBytes?: number;
  /** An external PostgreSQL and Redis the target used, when it did. */
  servicesMemory?: MemoryPeaks;
  charges?: ChargeCheck;
  seconds: number;
  /** The same request with `model: "auto"` and a named model (bench/routing.ts). */
  routing?: RoutingStep;
  /** The same gateway with the cache bypassed, missing and hitting (bench/cache.ts). */
  cache?: CacheStep;
}

export interface BenchResult {
  startedAt: string;
  wallSeconds: number;
  machine: Record<string, unknown>;
  /** The commit measured. */
  source: string;
  settings: Record<string, unknown>;
  body: unknown;
  /** The router's own cost, in process. */
  router?: RouterMicro;
  /** A semantic lookup in one tenant's in-process index of 100,000 entries. */
  cacheIndex?: IndexMicro;
  targets: TargetResult[];
  failures: Record<string, string>;
}

export async function writeResult(result: BenchResult): Promise<string> {
  const dir = join(ROOT, 'bench', 'results');
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${result.startedAt.replace(/[:.]/g, '-')}.json`);
  await writeFile(file, `${JSON.stringify(withAdded(result), null, 2)}\n`);
  return file;
}

type Pct = 'p50' | 'p90' | 'p99';
const PCTS: Pct[] = ['p50', 'p90', 'p99'];

/** The result with the derived numbers (added latency, throughput ratio) beside the measured ones. */
function withAdded(result: BenchResult) {
  const direct = result.targets.find((t) => t.id === 'direct');
  const diff = (a: Percentiles | undefined, b: Percentiles | undefined) =>
    a && b ? Object.fromEntries(PCTS.map((p) => [p, round(a[p] - b[p])])) : undefined;
  return {
    ...result,
    derived: direct
      ? Object.fromEntries(
          result.targets
            .filter((t) => t !== direct)
            .map((t) => [
              t.id,
              {
                throughputRatio: Object.fromEntries(
                  t.saturation.map((s, i) => [
                    s.connections,
                    round((s.rps / (direct.saturation[i]?.rps ?? Number.NaN)) * 1000) / 1000,
                  ]),
                ),
                addedLatencyMs: Object.fromEntries(
                  t.open.map((o, i) => [o.rate, diff(o.latencyMs, direct.open[i]?.latencyMs)]),
                ),
                addedStreamFirstByteMs: diff(t.stream.firstByteMs, direct.stream.firstByteMs),
                addedStreamLastByteMs: diff(t.stream.latencyMs, direct.stream.latencyMs),
              },
            ]),
        )
      : undefined,
    perRequest: Object.fromEntries(result.targets.map((t) => [t.id, perRequest(t)])),
    judged: judged(result),
  };
}

const round = (v: number) => Math.round(v * 1000) / 1000;

/** Each saturation step's cost divided by its requests answered 200: CPU ms, and PostgreSQL's rows and events. */
function perRequest(t: TargetResult) {
  return Object.fromEntries(
    (t.cost ?? []).map((c) => {
      const per = (v: number) => (c.ok > 0 ? round(v / c.ok) : undefined);
      const cpu = (part: 'target' | 'postgres' | 'other' | 'total') => {
        const v = cpuMsPerRequest(c, part);
        return v === undefined ? undefined : round(v);
      };
      return [
        c.connections,
        {
          cpuMs: {
            target: cpu('target'),
            postgres: cpu('postgres'),
            other: cpu('other'),
            total: cpu('total'),
          },
          ...(c.writes && {
            pgRowWrites: per(c.writes.inserted + c.writes.updated + c.writes.deleted),
            pgInserts: per(c.writes.inserted),
            pgUpdates: per(c.writes.updated),
            pgDeletes: per(c.writes.deleted),
            pgRowWritesByTable: Object.fromEntries(
              Object.entries(c.writes.byTable).map(([name, d]) => [
                name,
                per(d.inserted + d.updated + d.deleted),
              ]),
            ),
          }),
          ...(c.eventsAppended !== undefined && { eventsAppended: per(c.eventsAppended) }),
        },
      ];
    }),
  );
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map((r) => line(r))].join('\n');
}

const f = (v: number | undefined, digits = 2) =>
  v === undefined || Number.isNaN(v) ? '-' : v.toFixed(digits);
const plus = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(2)}`;
const mb = (bytes: number | undefined) => (bytes ? `${(bytes / 2 ** 20).toFixed(0)} MB` : '-');
const thousands = (v: number) => Math.round(v).toLocaleString('en-US');

/** "0.91 (+0.52)": the value, and what it adds to the direct one. */
function withDelta(value: number | undefined, base: number | undefined, isBase: boolean): string {
  if (value === undefined) return '-';
  if (isBase || base === undefined) return f(value);
  return `${f(value)} (${plus(value - base)})`;
}

export function printReport(result: BenchResult): void {
  const targets = result.targets;
  const direct = targets.find((t) => t.id === 'direct');
  const header = (first: string) => [first, ...targets.map((t) => t.label)];
  const out: string[] = [];
  const s = result.settings as Record<string, number>;
  if (targets.length === 0) {
    for (const [id, message] of Object.entries(result.failures)) out.push(`${id} FAILED: ${message}`);
    process.stdout.write(`${out.join('\n')}\n`);
    return;
  }

  out.push(
    `Saturation throughput: answers 200 per second, closed loop, ${s.seconds} s per step (ratio to direct)`,
  );
  const connections = targets[0]?.saturation.map((x) => x.connections) ?? [];
  out.push(
    table(
      header('connections'),
      connections.map((c, i) => [
        String(c),
        ...targets.map((t) => {
          const r = t.saturation[i];
          if (!r) return '-';
          const base = direct?.saturation[i]?.rps;
          const ratio = t === direct || !base ? '' : ` (${(r.rps / base).toFixed(2)}×)`;
          return `${thousands(r.rps)}${ratio}${r.errors ? ` [${r.errors} err]` : ''}`;
        }),
      ]),
    ),
  );

  out.push(
    '',
    `Latency at a constant arrival rate, ms from the due time, open loop, ${s.rateSeconds} s per rate ` +
      '(added over direct)',
  );
  const rows: string[][] = [];
  const rates = targets[0]?.open.map((o) => o.rate) ?? [];
  rates.forEach((rate, i) => {
    for (const p of PCTS) {
      rows.push([
        `${rate}/s ${p}`,
        ...targets.map((t) =>
          withDelta(t.open[i]?.latencyMs?.[p], direct?.open[i]?.latencyMs?.[p], t === direct),
        ),
      ]);
    }
    rows.push([
      `${rate}/s kept up`,
      ...targets.map((t) => {
        const o = t.open[i];
        return !o ? '-' : o.keptUp ? 'yes' : `NO: ${o.verdict}`;
      }),
    ]);
  });
  rows.push([
    'generator lag p50/p99',
    ...targets.map((t) => {
      const worst = (p: 'p50' | 'p99') => Math.max(...t.open.map((o) => o.sendLagMs?.[p] ?? 0));
      return `${f(worst('p50'))} / ${f(worst('p99'))}`;
    }),
  ]);
  out.push(table(header('rate, percentile'), rows));

  out.push(
    '',
    `Streaming at ${s.streamRate}/s for ${s.streamSeconds} s: ms from the due time to the first and last byte ` +
      'of the body (added over direct)',
  );
  const streamRows: string[][] = [];
  for (const [name, pick] of [
    ['first byte', (t: TargetResult) => t.stream.firstByteMs],
    ['last byte', (t: TargetResult) => t.stream.latencyMs],
  ] as const) {
    for (const p of ['p50', 'p99'] as const) {
      streamRows.push([
        `${name} ${p}`,
        ...targets.map((t) => withDelta(pick(t)?.[p], direct ? pick(direct)?.[p] : undefined, t === direct)),
      ]);
    }
  }
  streamRows.push(['kept up', ...targets.map((t) => (t.stream.keptUp ? 'yes' : `NO: ${t.stream.verdict}`))]);
  out.push(table(header('stream'), streamRows));

  out.push(
    '',
    'Memory of the target process tree: sums over its processes, sampled every 100 ms (PSS every second); ' +
      "'before load' includes an external PostgreSQL and Redis",
  );
  out.push(
    table(header('memory'), [
      ['RSS idle, before load', ...targets.map((t) => mb(t.idleRssBytes))],
      ['peak RSS (sum)', ...targets.map((t) => mb(t.memory?.peakRssBytes))],
      ['peak PSS (sum)', ...targets.map((t) => mb(t.memory?.peakPssBytes))],
      ['RSS at the end', ...targets.map((t) => mb(t.memory?.lastRssBytes))],
      ['processes', ...targets.map((t) => String(t.memory?.maxProcesses ?? '-'))],
      ['node alone: just started', ...targets.map((t) => mb(t.startedRootRssBytes))],
      ['node alone: idle', ...targets.map((t) => mb(t.idleRootRssBytes))],
      ['node alone: peak RSS', ...targets.map((t) => mb(t.rootMemory?.peakRssBytes))],
      ['+ ext. PG & Redis peak RSS', ...targets.map((t) => mb(t.servicesMemory?.peakRssBytes))],
    ]),
  );

  if (targets.some((t) => t.cost)) {
    out.push(
      '',
      'Cost per request answered 200 in the saturation steps: PostgreSQL row writes (pg_stat_user_tables) and ' +
        'events appended; CPU ms (user + system, /proc) of the process tree (and its services) until the ' +
        'projections caught up',
    );
    out.push(table(header('per request'), costRows(targets)));
  }

  out.push('', 'Billing: every request answered 200 has exactly one settled charge in the read model');
  out.push(
    table(header('billing'), [
      ['answered 200', ...targets.map((t) => (t.charges ? thousands(t.charges.answered200) : 'n/a'))],
      ['charged once', ...targets.map((t) => (t.charges ? thousands(t.charges.chargedOnce) : 'n/a'))],
      [
        'missing / twice',
        ...targets.map((t) => (t.charges ? `${t.charges.missing} / ${t.charges.duplicated}` : 'n/a')),
      ],
      [
        'wait for read model',
        ...targets.map((t) => (t.charges ? `${f(t.charges.catchUpSeconds, 1)} s` : 'n/a')),
      ],
      ['verdict', ...targets.map((t) => (t.charges ? (t.charges.passed ? 'PASS' : 'FAIL') : 'n/a'))],
    ]),
  );

  const goals = goalRows(result);
  if (goals.length > 0) {
    out.push('', "Targets (issue 33), gateway configurations beside Portkey's gateway");
    out.push(table(['target', ...targets.filter(isGateway).map((t) => t.label)], goals));
  }

  for (const [id, message] of Object.entries(result.failures)) {
    out.push('', `${id} FAILED: ${message.split('\n')[0]}`);
  }
  out.push(
    '',
    `${result.machine.cpus} × ${result.machine.cpuModel}, ${result.machine.memoryGiB} GiB, Node ${result.machine.node}; ` +
      `load generator in the same process as the bench, on the same cores as the targets; commit ${result.source}.`,
  );
  process.stdout.write(`${out.join('\n')}\n`);
}
