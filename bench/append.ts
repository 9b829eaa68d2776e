/**
 * `npm run bench:append`: the PostgreSQL event store's durable append, alone. One embedded PostgreSQL with
 * fsync on (as the gateway runs it); per round, N sequential single-event appends to one stream (each with the
 * exact expected revision, as the stream writer appends) and M single-event appends from C concurrent callers
 * across S streams (group commit). Reports p50/p99 latency, appends/s and statements sent per append.
 *
 * `APPEND_COMPARE=<dir>` also measures the store of another checkout (for example `git archive <commit> src
 * events | tar -x -C <dir>` with a `node_modules` link) on the same server, in its own schema, interleaved
 * round by round with this tree's, so that both see the same machine; the medians over rounds are reported.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import type { NewEvent } from '../events/envelope.ts';
import type { EventStore, ExpectedRevision } from '../events/store.ts';
import { openDatabase } from '../src/db/database.ts';

function num(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
  return value;
}

const settings = {
  sequential: num('APPEND_SEQUENTIAL', 400),
  concurrent: num('APPEND_CONCURRENT', 4000),
  callers: num('APPEND_CALLERS', 64),
  streams: num('APPEND_STREAMS', 64),
  rounds: num('APPEND_ROUNDS', 5),
};

interface Phase {
  p50: number;
  p99: number;
  perSecond: number;
  statements: number;
}

interface Target {
  name: string;
  store: EventStore;
  sequential: Phase[];
  concurrent: Phase[];
}

// Every statement pg sends goes through Client#query (the pool's too): counting them counts round trips.
let statements = 0;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  statements += 1;
  return (query as (...a: unknown[]) => unknown).apply(this, args);
} as typeof query;

function event(): NewEvent {
  return {
    id: randomUUID(),
    type: 'BenchAppended',
    data: { amountNanos: 1234567, model: 'openai/gpt-4o-mini', tags: ['bench'] },
    metadata: { schemaVersion: 1, correlationId: randomUUID() },
  };
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

function phase(latencies: number[], wallMs: number, count: number, sent: number): Phase {
  latencies.sort((a, b) => a - b);
  return {
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    perSecond: (count / wallMs) * 1000,
    statements: sent / count,
  };
}

async function sequential(store: EventStore, stream: string): Promise<Phase> {
  const latencies: number[] = [];
  let expected: ExpectedRevision = 'no_stream';
  const sent = statements;
  const start = performance.now();
  for (let i = 0; i < settings.sequential; i++) {
    const t = performance.now();
    expected = (await store.append(stream, [event()], expected)).nextRevision;
    latencies.push(performance.now() - t);
  }
  return phase(latencies, performance.now() - start, settings.sequential, statements - sent);
}

async function concurrent(store: EventStore, prefix: string): Promise<Phase> {
  const latencies: number[] = [];
  let next = 0;
  const sent = statements;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: settings.callers }, async () => {
      for (let i = next++; i < settings.concurrent; i = next++) {
        const t = performance.now();
        await store.append(`${prefix}-${i % settings.streams}`, [event()], 'any');
        latencies.push(performance.now() - t);
      }
    }),
  );
  return phase(latencies, performance.now() - start, settings.concurrent, statements - sent);
}

async function openStore(root: string, database: Awaited<ReturnType<typeof openDatabase>>, schema: string) {
  await database.pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  const config = { ...database.clientConfig, options: `-c search_path=${schema}` };
  // Four connections, as the gateway gives its store (src/eventstore/open.ts).
  const pool = new pg.Pool({ ...config, max: 4 });
  pool.on('error', () => {
    // A connection still closing when the server stops at the end.
  });
  const url = pathToFileURL(join(root, 'src/eventstore/postgres/store.ts')).href;
  const { PostgresEventStore } = (await import(url)) as typeof import('../src/eventstore/postgres/store.ts');
  const store = await PostgresEventStore.open({ pool, listenConfig: config, schema });
  return { store, pool };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function row(cells: readonly string[], widths: readonly number[]): string {
  return cells
    .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
    .join('  ');
}

function report(targets: readonly Target[]): void {
  const widths = [34, ...targets.map((t) => Math.max(t.name.length, 22))];
  console.log(row(['median over rounds (min–max)', ...targets.map((t) => t.name)], widths));
  const line = (label: string, pick: (t: Target) => number[], digits: number) =>
    console.log(
      row(
        [
          label,
          ...targets.map((t) => {
            const values = pick(t);
            const fmt = (v: number) => v.toFixed(digits);
            return `${fmt(median(values))} (${fmt(Math.min(...values))}–${fmt(Math.max(...values))})`;
          }),
        ],
        widths,
      ),
    );
  line('sequential p50 ms', (t) => t.sequential.map((p) => p.p50), 2);
  line('sequential p99 ms', (t) => t.sequential.map((p) => p.p99), 2);
  line('sequential appends/s', (t) => t.sequential.map((p) => p.perSecond), 0);
  line('sequential statements/append', (t) => t.sequential.map((p) => p.statements), 2);
  line(`${settings.callers} callers p50 ms`, (t) => t.concurrent.map((p) => p.p50), 2);
  line(`${settings.callers} callers p99 ms`, (t) => t.concurrent.map((p) => p.p99), 2);
  line(`${settings.callers} callers appends/s`, (t) => t.concurrent.map((p) => p.perSecond), 0);
  line(`${settings.callers} callers statements/append`, (t) => t.concurrent.map((p) => p.statements), 2);
}

const dataDir = await mkdtemp(join(tmpdir(), 'gw-bench-append-'));
const database = await openDatabase(
  { databaseUrl: undefined, dataDir, dbSchema: 'bench' },
  { whenRunning: 'restart', durable: true },
);
const opened: { pool: pg.Pool; store: EventStore }[] = [];
try {
  const roots = [{ name: 'this tree', root: resolve(import.meta.dirname, '..') }];
  const compare = process.env.APPEND_COMPARE;
  if (compare) roots.unshift({ name: `compare (${compare})`, root: resolve(compare) });
  const targets: Target[] = [];
  for (const [i, { name, root }] of roots.entries()) {
    const { store, pool } = await openStore(root, database, `bench_${i}`);
    opened.push({ pool, store });
    targets.push({ name, store, sequential: [], concurrent: [] });
  }
  const { rows } = await database.pool.query<{ fsync: string; sync: string }>(
    `SELECT current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS sync`,
  );
  console.log(
    `append bench: ${settings.rounds} rounds of ${settings.sequential} sequential appends and ${settings.concurrent} ` +
      `appends from ${settings.callers} callers over ${settings.streams} streams; embedded PostgreSQL with ` +
      `fsync=${rows[0]?.fsync}, synchronous_commit=${rows[0]?.sync}`,
  );
  for (const target of targets) {
    // Warm-up: connections, prepared statements, JIT.
    await sequential(target.store, `warm-${randomUUID()}`);
    await concurrent(target.store, `warm-${randomUUID()}`);
  }
  for (let round = 0; round < settings.rounds; round++) {
    // Alternate who goes first, so that drift in the machine's load falls on both alike.
    const order = round % 2 ? [...targets].reverse() : targets;
    for (const target of order) target.sequential.push(await sequential(target.store, `seq-${randomUUID()}`));
    for (const target of order)
      target.concurrent.push(await concurrent(target.store, `conc-${randomUUID()}`));
    process.stdout.write(`round ${round + 1}/${settings.rounds} done\n`);
  }
  report(targets);
} finally {
  for (const { store, pool } of opened) {
    await store.close();
    await pool.end();
  }
  await database.close();
  await rm(dataDir, { recursive: true, force: true });
}
