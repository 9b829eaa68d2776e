/**
 * What a request costs the machine, per saturation step: CPU time from /proc over the target's process tree (and
 * its services), and on gateway targets PostgreSQL's own row counters and the events appended.
 *
 * PostgreSQL's counters (`pg_stat_user_tables`) are not live: a backend keeps its counts and flushes them at the end
 * of a transaction at most once a second, and a backend that has gone idle flushes what it still holds 10 s later
 * (PGSTAT_MIN_INTERVAL and PGSTAT_IDLE_INTERVAL in PostgreSQL 15-17's pgstat.c). `pg_stat_force_next_flush()`
 * flushes the calling backend only, not the gateway's. So the counters are read once the projections have caught up
 * with the step and then BENCH_PG_SETTLE_SECONDS (11 s) later, both before and after the step.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import type { ClosedLoopResult } from './load.ts';
import { commandName, treeOf } from './procs.ts';
import type { Charges, RunningTarget } from './targets.ts';

/** The saturation step whose PostgreSQL row writes are counted (issue 33's target is at 16 connections). */
export const WRITES_AT_CONNECTIONS = 16;

/** CPU seconds (user + system) of a process tree, split by what the processes are. */
export interface CpuSplit {
  /** The target's own processes other than PostgreSQL: the gateway's node, Portkey's, the simulator. */
  target: number;
  /** PostgreSQL: the embedded one (children of the gateway) or the external one. */
  postgres: number;
  /** Other services the target uses: the external configuration's Redis. */
  other: number;
  total: number;
}

export interface RowWrites {
  inserted: number;
  updated: number;
  deleted: number;
  /** Per table (`schema.table`), only the tables written. */
  byTable: Record<string, { inserted: number; updated: number; deleted: number }>;
}

export interface StepCost {
  connections: number;
  /** Requests answered 200 in the step. */
  ok: number;
  /** CPU over the step and, on gateway targets, until the projections had caught up with it. */
  cpuSeconds: CpuSplit;
  /** CPU over the load alone (its total), without the catch-up. */
  stepCpuSeconds: number;
  /** How long after the step the projections took to reach its last event (gateway targets). */
  catchUpSeconds?: number;
  caughtUp?: boolean;
  /** PostgreSQL's row counters over the step (at WRITES_AT_CONNECTIONS only). */
  writes?: RowWrites;
  /** Rows added to the event log over the step (at WRITES_AT_CONNECTIONS only). */
  eventsAppended?: number;
}

const TICKS_PER_SECOND = clockTicks();

function clockTicks(): number {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return ticks > 0 ? ticks : 100;
  } catch {
    return 100;
  }
}

/**
 * A process's CPU seconds: every thread's user and system time, and that of its children it has reaped, so that a
 * PostgreSQL backend which exits during a step still counts (in its postmaster's).
 */
function cpuSecondsOf(pid: number): number {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the name (which may hold spaces): state is field 3, utime 14, stime 15, cutime 16, cstime 17.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0) / TICKS_PER_SECOND;
  } catch {
    return 0; // gone, and counted in its parent's children's time once reaped
  }
}

export function readCpu(target: Pick<RunningTarget, 'pids' | 'servicePids'>): CpuSplit {
  const split: CpuSplit = { target: 0, postgres: 0, other: 0, total: 0 };
  for (const pid of treeOf(target.pids)) {
    split[commandName(pid) === 'postgres' ? 'postgres' : 'target'] += cpuSecondsOf(pid);
  }
  for (const pid of treeOf(target.servicePids ?? [])) {
    split[commandName(pid) === 'postgres' ? 'postgres' : 'other'] += cpuSecondsOf(pid);
  }
  split.total = split.target + split.postgres + split.other;
  return split;
}

/** a − b, to the microsecond (the sums of ticks carry floating-point noise beyond it). */
function minus(a: CpuSplit, b: CpuSplit): CpuSplit {
  const d = (x: number, y: number) => Math.round((x - y) * 1e6) / 1e6;
  return {
    target: d(a.target, b.target),
    postgres: d(a.postgres, b.postgres),
    other: d(a.other, b.other),
    total: d(a.total, b.total),
  };
}

type Counters = Map<string, { inserted: number; updated: number; deleted: number }>;

/** One connection to the gateway's PostgreSQL, for its counters, its event log's head and the projections'. */
export class PgProbe {
  private constructor(
    private readonly client: pg.Client,
    private readonly schema: string,
  ) {}

  static async open(where: Charges): Promise<PgProbe> {
    const client = new pg.Client({ connectionString: where.connectionString });
    await client.connect();
    return new PgProbe(client, where.schema);
  }

  /** The event log's last position. */
  async head(): Promise<number> {
    const { rows } = await this.client.query<{ p: string | null }>(
      `SELECT max(position) AS p FROM "${this.schema}".events`,
    );
    return Number(rows[0]?.p ?? 0);
  }

  async eventsAfter(position: number): Promise<number> {
    const { rows } = await this.client.query<{ n: string }>(
      `SELECT count(*) AS n FROM "${this.schema}".events WHERE position > $1`,
      [position],
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** Waits until every projection's checkpoint is at `position` or beyond; false when it gave up. */
  async caughtUpTo(position: number, timeoutSeconds: number): Promise<boolean> {
    const deadline = performance.now() + timeoutSeconds * 1000;
    for (;;) {
      const { rows } = await this.client.query<{ p: string | null }>(
        `SELECT min(position) AS p FROM "${this.schema}".projection_checkpoints`,
      );
      if (rows[0]?.p === null || Number(rows[0]?.p) >= position) return true;
      if (performance.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async counters(): Promise<Counters> {
    const { rows } = await this.client.query<{ name: string; ins: string; upd: string; del: string }>(
      `SELECT schemaname || '.' || relname AS name, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_del AS del
       FROM pg_stat_user_tables`,
    );
    return new Map(
      rows.map((r) => [r.name, { inserted: Number(r.ins), updated: Number(r.upd), deleted: Number(r.del) }]),
    );
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => undefined);
  }
}

function writesBetween(before: Counters, after: Counters): RowWrites {
  const out: RowWrites = { inserted: 0, updated: 0, deleted: 0, byTable: {} };
  for (const [name, a] of after) {
    const b = before.get(name) ?? { inserted: 0, updated: 0, deleted: 0 };
    const d = {
      inserted: a.inserted - b.inserted,
      updated: a.updated - b.updated,
      deleted: a.deleted - b.deleted,
    };
    if (d.inserted === 0 && d.updated === 0 && d.deleted === 0) continue;
    out.byTable[name] = d;
    out.inserted += d.inserted;
    out.updated += d.updated;
    out.deleted += d.deleted;
  }
  return out;
}

const sleep = (seconds: number) => new Promise((r) => setTimeout(r, seconds * 1000));

/**
 * Runs one saturation step and measures its cost: CPU from the step's start until the projections have caught up
 * with it, and at WRITES_AT_CONNECTIONS the row counters and events between settled readings.
 */
export async function costedStep(
  target: RunningTarget,
  probe: PgProbe | undefined,
  connections: number,
  options: { settleSeconds: number; catchUpSeconds: number },
  run: () => Promise<ClosedLoopResult>,
): Promise<{ result: ClosedLoopResult; cost: StepCost }> {
  const countWrites = probe !== undefined && connections === WRITES_AT_CONNECTIONS;
  let before: { counters: Counters; head: number } | undefined;
  if (countWrites) {
    // Earlier steps' writes must be in the counters before the first reading.
    await probe.caughtUpTo(await probe.head(), options.catchUpSeconds);
    await sleep(options.settleSeconds);
    before = { counters: await probe.counters(), head: await probe.head() };
  }
  const cpu0 = readCpu(target);
  const result = await run();
  const cpu1 = readCpu(target);
  const cost: StepCost = {
    connections,
    ok: result.ok,
    cpuSeconds: minus(cpu1, cpu0),
    stepCpuSeconds: minus(cpu1, cpu0).total,
  };
  if (probe) {
    const t0 = performance.now();
    cost.caughtUp = await probe.caughtUpTo(await probe.head(), options.catchUpSeconds);
    cost.catchUpSeconds = (performance.now() - t0) / 1000;
    cost.cpuSeconds = minus(readCpu(target), cpu0);
  }
  if (probe && before) {
    await sleep(options.settleSeconds);
    cost.writes = writesBetween(before.counters, await probe.counters());
    cost.eventsAppended = await probe.eventsAfter(before.head);
  }
  return { result, cost };
}

/** ms of CPU per request answered 200. */
export function cpuMsPerRequest(
  cost: StepCost | undefined,
  part: keyof CpuSplit = 'total',
): number | undefined {
  if (!cost || cost.ok === 0) return undefined;
  return (cost.cpuSeconds[part] * 1000) / cost.ok;
}

/** CPU per request over the steps at the given connection counts together (total CPU over total requests). */
export function cpuMsOver(
  costs: StepCost[] | undefined,
  connections: number[],
  part: keyof CpuSplit = 'total',
): number | undefined {
  const steps = (costs ?? []).filter((c) => connections.includes(c.connections));
  const ok = steps.reduce((sum, c) => sum + c.ok, 0);
  if (steps.length !== connections.length || ok === 0) return undefined;
  return (steps.reduce((sum, c) => sum + c.cpuSeconds[part], 0) * 1000) / ok;
}

/** One line for the bench's log. */
export function describeCost(cost: StepCost): string {
  const per = (part: keyof CpuSplit) => (cpuMsPerRequest(cost, part) ?? 0).toFixed(3);
  const parts = [`CPU ${per('total')} ms/request (target ${per('target')}, PostgreSQL ${per('postgres')}`];
  if (cost.cpuSeconds.other > 0) parts.push(`, Redis ${per('other')}`);
  parts.push(')');
  if (cost.catchUpSeconds !== undefined) {
    parts.push(
      `, projections ${cost.caughtUp ? 'caught up' : 'NOT caught up'} in ${cost.catchUpSeconds.toFixed(1)} s`,
    );
  }
  const w = cost.writes;
  if (w && cost.ok > 0) {
    const r = (v: number) => (v / cost.ok).toFixed(2);
    const tables = Object.entries(w.byTable)
      .sort(([, a], [, b]) => b.inserted + b.updated + b.deleted - (a.inserted + a.updated + a.deleted))
      .map(([name, d]) => `${name.replace(/^[^.]*\./, '')} ${r(d.inserted + d.updated + d.deleted)}`)
      .join(', ');
    parts.push(
      `; PostgreSQL row writes ${r(w.inserted + w.updated + w.deleted)}/request (${r(w.inserted)} inserts, ` +
        `${r(w.updated)} updates, ${r(w.deleted)} deletes: ${tables}); events ${r(cost.eventsAppended ?? 0)}/request`,
    );
  }
  return parts.join('');
}
