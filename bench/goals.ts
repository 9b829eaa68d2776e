/**
 * The bench's verdicts: issue 33's targets for the gateway configurations, judged beside Portkey's gateway in the
 * same run, and the per-request cost table they rest on.
 */
import { cpuMsOver, cpuMsPerRequest, type StepCost, WRITES_AT_CONNECTIONS } from './cost.ts';
import type { BenchResult, TargetResult } from './report.ts';

export const isGateway = (t: TargetResult) => t.id.startsWith('gateway');

/** The steps CPU per request is judged over, together. */
const CPU_AT = [16, 64];
const CPU_RATIO = 1.5;
const ADDED_AT_RATE = 500;
const PSS_LIMIT_MB = 250;
const WRITES_LIMIT = 2;

/**
 * The WAL flush time, in ms: the sequential durable append's p50 measured by `npm run bench:append` on the same
 * machine, given as BENCH_FLUSH_MS.
 */
function flushMs(): number | undefined {
  const given = Number(process.env.BENCH_FLUSH_MS);
  return Number.isFinite(given) && given > 0 ? given : undefined;
}

const f = (v: number | undefined, digits = 2) =>
  v === undefined || Number.isNaN(v) ? '-' : v.toFixed(digits);
const plus = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(2)}`;
const thousands = (v: number) => Math.round(v).toLocaleString('en-US');

function writesPerRequest(t: TargetResult) {
  const step = t.cost?.find((c) => c.connections === WRITES_AT_CONNECTIONS);
  const w = step?.writes;
  if (!step || !w || step.ok === 0) return undefined;
  return {
    total: (w.inserted + w.updated + w.deleted) / step.ok,
    inserted: w.inserted / step.ok,
    updated: w.updated / step.ok,
    deleted: w.deleted / step.ok,
    events: (step.eventsAppended ?? 0) / step.ok,
  };
}

/** Rows of the "cost per request" table: one column per target. */
export function costRows(targets: TargetResult[]): string[][] {
  const rows: string[][] = [];
  const writes = targets.map((t) => writesPerRequest(t));
  const gatewayOnly = (t: TargetResult, text: string) => (isGateway(t) ? text : 'n/a');
  rows.push(
    [
      `PG row writes at ${WRITES_AT_CONNECTIONS} conn.`,
      ...targets.map((t, i) => gatewayOnly(t, f(writes[i]?.total))),
    ],
    ['  inserts', ...targets.map((t, i) => gatewayOnly(t, f(writes[i]?.inserted)))],
    ['  updates', ...targets.map((t, i) => gatewayOnly(t, f(writes[i]?.updated)))],
    ['  deletes', ...targets.map((t, i) => gatewayOnly(t, f(writes[i]?.deleted)))],
    [
      `events appended at ${WRITES_AT_CONNECTIONS} conn.`,
      ...targets.map((t, i) => gatewayOnly(t, f(writes[i]?.events))),
    ],
  );
  const connections = targets[0]?.saturation.map((s) => s.connections) ?? [];
  const cpu = (t: TargetResult, step: StepCost | undefined, total: number | undefined) => {
    if (total === undefined) return '-';
    if (!step || (step.cpuSeconds.postgres === 0 && step.cpuSeconds.other === 0)) return f(total, 3);
    const pgMs = cpuMsPerRequest(step, 'postgres');
    const other = step.cpuSeconds.other > 0 ? `, Redis ${f(cpuMsPerRequest(step, 'other'), 3)}` : '';
    return `${f(total, 3)} (node ${f(cpuMsPerRequest(step, 'target'), 3)}, PG ${f(pgMs, 3)}${other})${
      isGateway(t) && step.caughtUp === false ? ' [projections behind]' : ''
    }`;
  };
  for (const c of connections) {
    rows.push([
      `CPU ms at ${c} conn.`,
      ...targets.map((t) => {
        const step = t.cost?.find((x) => x.connections === c);
        return cpu(t, step, cpuMsPerRequest(step));
      }),
    ]);
  }
  if (CPU_AT.every((c) => connections.includes(c))) {
    rows.push([
      `CPU ms at ${CPU_AT.join(' + ')} conn.`,
      ...targets.map((t) => {
        const total = cpuMsOver(t.cost, CPU_AT);
        if (total === undefined) return '-';
        const part = (p: 'target' | 'postgres' | 'other') => cpuMsOver(t.cost, CPU_AT, p) ?? 0;
        if (part('postgres') === 0 && part('other') === 0) return f(total, 3);
        const other = part('other') > 0 ? `, Redis ${f(part('other'), 3)}` : '';
        return `${f(total, 3)} (node ${f(part('target'), 3)}, PG ${f(part('postgres'), 3)}${other})`;
      }),
    ]);
  }
  return rows;
}

/** Issue 33's targets, one row each, one column per gateway configuration. */
export function goalRows(result: BenchResult): string[][] {
  const targets = result.targets;
  const gateways = targets.filter(isGateway);
  const direct = targets.find((t) => t.id === 'direct');
  const peer = targets.find((t) => t.id === 'portkey');
  if (gateways.length === 0) return [];
  const flush = flushMs();
  const best = (t: TargetResult) => Math.max(0, ...t.saturation.map((x) => x.rps));
  const at = (t: TargetResult, connections: number) =>
    t.saturation.find((x) => x.connections === connections)?.rps;
  const verdict = (ok: boolean | undefined, text: string) =>
    ok === undefined ? `not judged: ${text}` : `${ok ? 'met' : 'NOT met'}: ${text}`;
  /**
   * Within Portkey's figure plus one flush: met when within Portkey's alone, and otherwise judged only when the
   * flush time is given.
   */
  const withinPeerPlusFlush = (mine: number, theirs: number) =>
    mine <= theirs ? true : flush === undefined ? undefined : mine <= theirs + flush;
  const flushText = flush === undefined ? 'flush not given (BENCH_FLUSH_MS)' : `flush ${flush} ms`;
  const addedP50 = (t: TargetResult, rate: number) => {
    const i = t.open.findIndex((o) => o.rate === rate);
    const mine = t.open[i]?.latencyMs?.p50;
    const base = direct?.open.find((o) => o.rate === rate)?.latencyMs?.p50;
    return i < 0 || mine === undefined || base === undefined
      ? undefined
      : { added: mine - base, keptUp: t.open[i]?.keptUp ?? false };
  };
  return [
    [
      `PG row writes per request at ${WRITES_AT_CONNECTIONS} conn. ≤ ${WRITES_LIMIT}`,
      ...gateways.map((t) => {
        const w = writesPerRequest(t);
        if (!w) return '-';
        return verdict(
          w.total <= WRITES_LIMIT,
          `${f(w.total)} (${f(w.inserted)} ins, ${f(w.updated)} upd, ${f(w.deleted)} del)`,
        );
      }),
    ],
    [
      `CPU per request at ${CPU_AT.join(' + ')} conn. (gateway + its PG) ≤ ${CPU_RATIO}× Portkey's`,
      ...gateways.map((t) => {
        const mine = cpuMsOver(t.cost, CPU_AT);
        const theirs = peer ? cpuMsOver(peer.cost, CPU_AT) : undefined;
        if (mine === undefined || !theirs) return '-';
        return verdict(
          mine <= CPU_RATIO * theirs,
          `${f(mine, 3)} vs ${f(theirs, 3)} ms (${(mine / theirs).toFixed(2)}×)`,
        );
      }),
    ],
    [
      "saturation at 64 conn. ≥ Portkey's best step",
      ...gateways.map((t) => {
        const mine = at(t, 64);
        if (mine === undefined || !peer || best(peer) === 0) return '-';
        return verdict(
          mine >= best(peer),
          `${thousands(mine)} vs ${thousands(best(peer))}/s (${(mine / best(peer)).toFixed(2)}×)`,
        );
      }),
    ],
    [
      `added p50 at ${ADDED_AT_RATE}/s ≤ Portkey's + one flush`,
      ...gateways.map((t) => {
        const mine = addedP50(t, ADDED_AT_RATE);
        const theirs = peer ? addedP50(peer, ADDED_AT_RATE) : undefined;
        if (!mine || !theirs) return '-';
        const text = `${plus(mine.added)} ms (Portkey ${plus(theirs.added)}, ${flushText})`;
        if (!mine.keptUp) return verdict(false, `${text}, did not keep up`);
        return verdict(withinPeerPlusFlush(mine.added, theirs.added), text);
      }),
    ],
    [
      "one connection: time per request ≤ Portkey's + one flush",
      ...gateways.map((t) => {
        const mine = at(t, 1);
        const theirs = peer ? at(peer, 1) : undefined;
        if (!mine || !theirs) return '-';
        const [m, p] = [1000 / mine, 1000 / theirs];
        return verdict(withinPeerPlusFlush(m, p), `${f(m, 3)} vs ${f(p, 3)} ms (${flushText})`);
      }),
    ],
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
      'every 200 charged exactly once',
      ...gateways.map((t) =>
        t.charges
          ? verdict(
              t.charges.passed,
              `${thousands(t.charges.chargedOnce)} of ${thousands(t.charges.answered200)}`,
            )
          : '-',
      ),
    ],
    [
      `peak PSS ≤ ${PSS_LIMIT_MB} MB (gateway + its PG)`,
      ...gateways.map((t) => {
        // The embedded configuration's tree holds its PostgreSQL; the external one's PostgreSQL is separate.
        const pss = t.memory.peakPssBytes + (t.servicesMemory?.peakPssBytes ?? 0);
        return verdict(pss <= PSS_LIMIT_MB * 2 ** 20, `${(pss / 2 ** 20).toFixed(0)} MB`);
      }),
    ],
  ];
}

/** The verdicts for the JSON: each target's text per gateway configuration. */
export function judged(result: BenchResult): { target: string; [id: string]: string }[] {
  const gateways = result.targets.filter(isGateway);
  return goalRows(result).map(([name, ...cells]) => ({
    target: name ?? '',
    ...Object.fromEntries(gateways.map((t, i) => [t.id, cells[i] ?? '-'])),
  }));
}
