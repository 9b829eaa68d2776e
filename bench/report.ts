/** The bench's table on stdout and its JSON under bench/results/. */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CacheStep, IndexMicro } from './cache.ts';
import type { ChargeCheck } from './charges.ts';
import type { ClosedLoopResult, OpenLoopResult, Percentiles } from './load.ts';
import type { MemoryPeaks } from './procs.ts';
import type { RouterMicro, RoutingStep } from './routing.ts';
import { ROOT } from './targets.ts';

export interface TargetResult {
  id: string;
  label: string;
  saturation: ClosedLoopResult[];
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
  };
}

const round = (v: number) => Math.round(v * 1000) / 1000;

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
    out.push('', 'Targets (gateway configurations)');
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

const isGateway = (t: TargetResult) => t.id.startsWith('gateway');

/**
 * The WAL flush time to hold added latency to, in ms: the sequential durable append's p50 measured by
 * `npm run bench:append` on the same machine, given as BENCH_FLUSH_MS.
 */
function flushMs(): number | undefined {
  const given = Number(process.env.BENCH_FLUSH_MS);
  return Number.isFinite(given) && given > 0 ? given : undefined;
}

function goalRows(result: BenchResult): string[][] {
  const targets = result.targets;
  const gateways = targets.filter(isGateway);
  const direct = targets.find((t) => t.id === 'direct');
  const peer = targets.find((t) => t.id === 'portkey');
  if (gateways.length === 0) return [];
  const best = (t: TargetResult) => Math.max(0, ...t.saturation.map((x) => x.rps));
  const at = (t: TargetResult, connections: number) =>
    t.saturation.find((x) => x.connections === connections)?.rps;
  const verdict = (ok: boolean | undefined, text: string) =>
    ok === undefined ? '-' : `${ok ? 'met' : 'NOT met'}: ${text}`;
  const addedP50 = (t: TargetResult, rate: number) => {
    const i = t.open.findIndex((o) => o.rate === rate);
    const mine = t.open[i]?.latencyMs?.p50;
    const base = direct?.open[i]?.latencyMs?.p50;
    return i < 0 || mine === undefined || base === undefined
      ? undefined
      : { added: mine - base, keptUp: t.open[i]?.keptUp ?? false };
  };
  const flush = flushMs();
  const latencyRow = (rate: number) => [
    `added p50 at ${rate}/s ≤ Portkey's and ≤ flush${flush === undefined ? '' : ` (${flush} ms)`} + 1 ms`,
    ...gateways.map((t) => {
      const mine = addedP50(t, rate);
      const theirs = peer ? addedP50(peer, rate) : undefined;
      if (!mine) return '-';
      const vsPeer = theirs === undefined ? undefined : mine.added <= theirs.added;
      const vsFlush = flush === undefined ? undefined : mine.added <= flush + 1;
      const ok = mine.keptUp && vsPeer !== false && vsFlush !== false && (vsPeer ?? vsFlush) !== undefined;
      const against = [
        theirs === undefined ? '' : `Portkey ${plus(theirs.added)}`,
        flush === undefined ? 'flush not given (BENCH_FLUSH_MS)' : `bound ${plus(flush + 1)}`,
      ].filter(Boolean);
      return verdict(ok, `${plus(mine.added)} ms (${against.join(', ')})`);
    }),
  ];
  return [
    [
      "one connection ≥ Portkey's requests/s",
      ...gateways.map((t) => {
        const mine = at(t, 1);
        const theirs = peer ? at(peer, 1) : undefined;
        if (mine === undefined || !theirs) return '-';
        return verdict(
          mine >= theirs,
          `${thousands(mine)} vs ${thousands(theirs)} (${(mine / theirs).toFixed(2)}×)`,
        );
      }),
    ],
    latencyRow(100),
    latencyRow(500),
    [
      'streamed first byte: added p50 ≤ 1 ms',
      ...gateways.map((t) => {
        const mine = t.stream.firstByteMs?.p50;
        const base = direct?.stream.firstByteMs?.p50;
        if (mine === undefined || base === undefined) return '-';
        return verdict(mine - base <= 1, `${plus(mine - base)} ms`);
      }),
    ],
    [
      "64 connections ≥ 3× Portkey's best step",
      ...gateways.map((t) => {
        const mine = at(t, 64);
        if (mine === undefined || !peer || best(peer) === 0) return '-';
        const ratio = mine / best(peer);
        return verdict(ratio >= 3, `${ratio.toFixed(1)}×`);
      }),
    ],
    [
      'peak PSS ≤ 250 MB (gateway + its PG)',
      ...gateways.map((t) => {
        // The embedded configuration's tree holds its PostgreSQL; the external one's PostgreSQL is separate.
        const pss = t.memory.peakPssBytes + (t.servicesMemory?.peakPssBytes ?? 0);
        return verdict(pss <= 250 * 2 ** 20, `${mb(pss)}`);
      }),
    ],
    [
      'node alone idle ≤ 120 MB',
      ...gateways.map((t) => verdict(t.idleRootRssBytes <= 120 * 2 ** 20, mb(t.idleRootRssBytes))),
    ],
    [
      'billing: every 200 charged once',
      ...gateways.map((t) =>
        t.charges
          ? verdict(
              t.charges.passed,
              `${thousands(t.charges.chargedOnce)} of ${thousands(t.charges.answered200)}`,
            )
          : '-',
      ),
    ],
  ];
}
