import { writeFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../events/envelope.ts';
import { START } from '../../events/store.ts';
import { balancesProjection } from '../../projections/balances/index.ts';
import { projections } from '../../projections/index.ts';
import { requestsProjection } from '../../projections/requests/index.ts';
import { statementsProjection } from '../../projections/statements/index.ts';
import { liveTables, type Projection, type Sql } from '../../projections/types.ts';
import { usageProjection } from '../../projections/usage/index.ts';
import { AccountService } from '../../src/accounts/service.ts';
import type { Database } from '../../src/db/database.ts';
import { applyEvents } from '../../src/projections/apply.ts';
import { BatchedSql } from '../../src/projections/batched-sql.ts';
import { ProjectionRunner } from '../../src/projections/runner.ts';
import { createTables, ensureProjectionTables } from '../../src/projections/tables.ts';
import { readAllFrom } from '../eventstore/contract.ts';
import { testDatabase, testStore } from '../support/database.ts';
import { completed, MoneyLog, mixedLog, settled } from './money-log.ts';

const money = [balancesProjection, usageProjection, statementsProjection];
/** And the request log, which a run writes in one multi-row INSERT. */
const folded = [...money, requestsProjection];

let database: Database;
let client: pg.Client;
const schemas: string[] = [];

beforeAll(async () => {
  database = await testDatabase();
  client = new pg.Client(database.clientConfig);
  await client.connect();
});
afterAll(async () => {
  for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await client.end();
  await database.close();
});

/** A schema of its own for one folding: the projections' live table names (a lookup of `charges` included). */
async function freshSchema(of: readonly Projection[]): Promise<void> {
  const schema = `${database.schema}_${schemas.length}`;
  schemas.push(schema);
  await client.query(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`);
  for (const projection of of) await createTables(client, projection, liveTables(projection));
}

class CountingSql implements Sql {
  count = 0;
  constructor(private readonly inner: Sql) {}
  query<Row extends Record<string, unknown> = Record<string, unknown>>(text: string, values?: unknown[]) {
    this.count += 1;
    return this.inner.query<Row>(text, values);
  }
}

/** Folds the runs as the runner does: each in one transaction, every projection's writes sent together. */
async function fold(
  runs: readonly (readonly StoredEvent[])[],
  of: readonly Projection[] = money,
): Promise<Map<string, number>> {
  const statements = new Map<string, number>();
  for (const run of runs) {
    await client.query('BEGIN');
    // The view also counts a backend's earlier transactions not yet reported: the run's own writes are the difference.
    const before = await writesSoFar();
    const batched = new BatchedSql(client);
    for (const projection of of) {
      const sql = new CountingSql(batched);
      await applyEvents(sql, projection, liveTables(projection), run);
      statements.set(projection.name, (statements.get(projection.name) ?? 0) + sql.count);
    }
    await batched.flush();
    if (runs.length === 1) lastRunWrites = difference(await writesSoFar(), before);
    await client.query('COMMIT');
  }
  return statements;
}

type Writes = Map<string, { ins: number; upd: number }>;
let lastRunWrites: Writes = new Map();

function difference(after: Writes, before: Writes): Writes {
  const out: Writes = new Map();
  for (const [table, { ins, upd }] of after) {
    const was = before.get(table) ?? { ins: 0, upd: 0 };
    if (ins !== was.ins || upd !== was.upd) out.set(table, { ins: ins - was.ins, upd: upd - was.upd });
  }
  return out;
}

/** Rows this transaction inserted and updated, per table. */
async function writesSoFar(): Promise<Writes> {
  const { rows } = await client.query<{ relname: string; ins: string; upd: string }>(
    `SELECT relname, n_tup_ins AS ins, n_tup_upd AS upd FROM pg_stat_xact_user_tables
     WHERE schemaname = current_schema()`,
  );
  return new Map(rows.map((r) => [r.relname, { ins: Number(r.ins), upd: Number(r.upd) }]));
}

async function dump(of: readonly Projection[] = money): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const projection of of)
    for (const table of Object.keys(projection.tables)) {
      const { rows } = await client.query<{ row: string }>(
        `SELECT to_jsonb(x)::text AS row FROM ${table} x ORDER BY 1`,
      );
      out[table] = rows.map((r) => r.row);
    }
  return out;
}

/** Cuts the events into runs at random places (a seeded generator, so that a failure can be repeated). */
function randomRuns(events: readonly StoredEvent[], seed: number): StoredEvent[][] {
  let state = seed;
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t ^= t + Math.imul(t ^ (t >>> 7), 61 | t);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const runs: StoredEvent[][] = [];
  for (let i = 0; i < events.length; ) {
    const size = 1 + Math.floor(next() * 12);
    runs.push(events.slice(i, i + size));
    i += size;
  }
  return runs;
}

describe('read models folded per run', () => {
  const log = mixedLog();

  it('come out the same for the money and the request log folded per event, in one run, or in any split of runs, and folding again changes nothing', async () => {
    await freshSchema(folded);
    await fold(
      log.events.map((event) => [event]),
      folded,
    );
    const perEvent = await dump(folded);
    expect(perEvent.charges?.length).toBeGreaterThan(50);
    expect(perEvent.statement_lines?.length).toBeGreaterThan(2);
    expect(perEvent.usage_models?.some((row) => row.includes('claude-3-5-haiku'))).toBe(true);
    expect(perEvent.request_log?.length).toBe(10);

    await freshSchema(folded);
    await fold([log.events], folded);
    expect(await dump(folded)).toEqual(perEvent);
    if (process.env.RUN_FOLD_DUMP)
      writeFileSync(process.env.RUN_FOLD_DUMP, JSON.stringify(perEvent, null, 1));
    // Every event again, in runs cut elsewhere: a replay moves no counter.
    await fold(randomRuns(log.events, 99), folded);
    await fold([log.events], folded);
    expect(await dump(folded)).toEqual(perEvent);

    for (const seed of [1, 2, 3]) {
      await freshSchema(folded);
      await fold(randomRuns(log.events, seed), folded);
      expect(await dump(folded), `split ${seed}`).toEqual(perEvent);
    }
  });

  it('write each balance, usage and statement row once per run of settles of one account', async () => {
    const n = 100;
    const run = new MoneyLog();
    run.add('AccountOpened', { accountId: 'acct_n', name: 'N', rateLimitRpm: 60 });
    run.add('AccountToppedUp', { accountId: 'acct_n', reference: 'pay', amountNanos: '900000000000' });
    const spend = (i: number) => ({
      accountId: 'acct_n',
      holdId: `hn_${i}`,
      chargedNanos: String(1000 + i),
      subAccountId: 'sub_n',
      tag: 'resold',
      priceNanos: String(2000 + i),
    });
    settled(run, spend(0));
    const opening = run.events.length;
    for (let i = 1; i <= n; i++) settled(run, { ...spend(i) }, 50);
    await freshSchema(money);
    await fold([run.events.slice(0, opening)]);

    const statements = await fold([run.events.slice(opening)]);
    expect(Object.fromEntries(statements)).toEqual({ balances: 1, usage: 1, statements: 1 });
    const rowsOf = (table: string) => lastRunWrites.get(table);
    for (const table of ['balances', 'usage', 'usage_models', 'usage_daily', 'statement_lines'])
      expect(rowsOf(table), table).toEqual({ ins: 0, upd: 1 });
    for (const table of ['charges', 'usage_events', 'statement_events'])
      expect(rowsOf(table), table).toEqual({ ins: n, upd: 0 });
    const { rows } = await client.query<{ balance_nanos: string; charged_nanos: string }>(
      'SELECT balance_nanos, charged_nanos FROM balances',
    );
    const charged = Array.from({ length: n + 1 }, (_, i) => 1000n + BigInt(i)).reduce((a, b) => a + b);
    expect(rows).toEqual([
      { balance_nanos: String(900000000000n - charged), charged_nanos: String(charged) },
    ]);
  });

  it.runIf(process.env.RUN_FOLD_MEASURE)('measures a run of 100 served requests of one account', async () => {
    const run = new MoneyLog();
    run.add('AccountOpened', { accountId: 'acct_m', name: 'M', rateLimitRpm: 60 });
    run.add('AccountToppedUp', { accountId: 'acct_m', reference: 'pay', amountNanos: '900000000000' });
    const opening = run.events.length;
    for (let i = 0; i < 100; i++) {
      const hold = {
        accountId: 'acct_m',
        month: run.month(),
        holdId: `hm_${i}`,
        requestId: `req_hm_${i}`,
        subAccountId: null,
        tag: null,
      };
      run.add(
        'SpendReserved',
        { ...hold, amountNanos: '900000000', expiresAt: '2026-04-01T01:00:00.000Z' },
        10,
      );
      settled(run, { accountId: 'acct_m', holdId: hold.holdId, chargedNanos: String(1000 + i) }, 10);
      completed(
        run,
        { logId: `log_${i}`, holdId: `hm_${i}`, accountId: 'acct_m', costNanos: String(1000 + i) },
        10,
      );
    }
    // The time to fold the run, as the median of five foldings into fresh tables (a figure, not a check).
    const times: number[] = [];
    let statements = new Map<string, number>();
    for (let k = 0; k < 5; k++) {
      await freshSchema(projections);
      await fold([run.events.slice(0, opening)], projections);
      const started = performance.now();
      statements = await fold([run.events.slice(opening)], projections);
      times.push(performance.now() - started);
    }
    const foldMs = times.sort((a, b) => a - b)[2]?.toFixed(1);
    let ins = 0;
    let upd = 0;
    for (const { ins: i, upd: u } of lastRunWrites.values()) {
      ins += i;
      upd += u;
    }
    const total = [...statements.values()].reduce((a, b) => a + b, 0);
    console.log(
      JSON.stringify({ statements: total, perProjection: Object.fromEntries(statements), ins, upd, foldMs }),
      JSON.stringify(Object.fromEntries(lastRunWrites)),
    );
  });
});

describe.runIf(process.env.RUN_FOLD_MEASURE)('read-model lag', () => {
  it('measures the time from an append to its projection', async () => {
    const store = await testStore(database);
    await ensureProjectionTables(database.pool, projections);
    const runner = new ProjectionRunner({ pool: database.pool, store, projections });
    runner.start();
    try {
      const accounts = new AccountService(store, async () => undefined);
      const account = await accounts.createAccount('lag');
      let head = (await readAllFrom(store, START)).at(-1)?.checkpoint ?? START;
      await runner.caughtUpTo(head);
      const lags: number[] = [];
      for (let i = 0; i < 40; i++) {
        await accounts.topUp(account.account_id, 1, `lag_${i}`);
        const appended = performance.now();
        head = (await store.readAll(head)).at(-1)?.checkpoint ?? head;
        await runner.caughtUpTo(head);
        lags.push(performance.now() - appended);
        // Apart from each other, as after a quiet spell (the runner then pauses 25 ms after its run).
        await new Promise((r) => setTimeout(r, 40));
      }
      lags.sort((a, b) => a - b);
      const at = (q: number) => lags[Math.floor(q * (lags.length - 1))]?.toFixed(1);
      console.log(JSON.stringify({ lagMs: { p50: at(0.5), p90: at(0.9), max: at(1) } }));
    } finally {
      await runner.stop();
      await store.close();
    }
  });
});
