import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { START } from '../../events/store.ts';
import { projections } from '../../projections/index.ts';
import type { Database } from '../../src/db/database.ts';
import { ensureProjectionTables } from '../../src/projections/tables.ts';
import { chat, say } from '../support/chat.ts';
import { runCli } from '../support/cli.ts';
import { testDatabase, testStore } from '../support/database.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

/**
 * The log of a short run of the code before a served request became one event (commit e7ca7fc, the parent of
 * b6e9db1) on its embedded store: the demo account topped up once, a sub-account capped at 2 cents, 36 chat
 * completions on local models 16 in flight, so that spend leases were taken and holds carved from them (plain,
 * streamed, `cache: skip`, identical temperature-0 ones missing then hitting, the sub-account over its cap: 402, an
 * unknown model: 404), then one streamed hit. Every event in the readers' order, as stored, but the `catalog-models`
 * stream: one snapshot of the whole price list, half the file, which nothing else refers to and a gateway takes anew
 * at start. That code stored a request as `SpendReserved`, `SpendSettled` and `RequestCompleted`; today's carries the
 * hold and the record inside `SpendSettled`, and the gateway and its audit must read both.
 */
const FIXTURE = join(import.meta.dirname, 'fixtures', 'log-before-one-event.jsonl');

interface FixtureEvent {
  stream: string;
  revision: number;
  id: string;
  type: string;
  occurredAt: string;
  data: Record<string, unknown>;
  metadata: { schemaVersion: number };
  /** The hash the old store gave it: the same event re-appended must chain to the same one. */
  hash: string;
}

const fixture: FixtureEvent[] = readFileSync(FIXTURE, 'utf8')
  .split('\n')
  .filter((line) => line !== '')
  .map((line) => JSON.parse(line));

const ofType = (type: string) => fixture.filter((e) => e.type === type);
const sumNanos = (events: FixtureEvent[], field: string) =>
  events.reduce((sum, e) => sum + BigInt(e.data[field] as string), 0n);
/** A cents figure the gateway prints (at most 7 decimals, a nano-dollar each) as exact nanos. */
const nanosOf = (cents: string | number) => BigInt(Number(cents).toFixed(7).replace('.', ''));

const accountId = (ofType('AccountOpened')[0] as FixtureEvent).data.accountId as string;
const toppedUp = sumNanos(ofType('AccountToppedUp'), 'amountNanos');
const chargedBefore =
  sumNanos(ofType('SpendSettled'), 'chargedNanos') + sumNanos(ofType('SpendOverrun'), 'overrunNanos');
const reserved = ofType('SpendReserved');
const leases = reserved.filter((e) => e.data.lease === true).length;
const carved = reserved.filter((e) => e.data.leaseId !== undefined).length;
const holds = reserved.length - leases;

/**
 * The events appended to a fresh schema through the store's own append, with their ids and times, each stream's in
 * its order (runs of one stream in one append), before any gateway reads them. With `sameHashes`, each stream's
 * chain is checked to be the one the old store computed: the bytes are the old code's.
 */
async function seed(events: FixtureEvent[], sameHashes: boolean): Promise<Database> {
  const database = await testDatabase();
  const store = await testStore(database);
  try {
    for (let from = 0; from < events.length; ) {
      const first = events[from] as FixtureEvent;
      let to = from + 1;
      while (to < events.length && events[to]?.stream === first.stream) to += 1;
      const run = events.slice(from, to);
      await store.append(
        first.stream,
        run.map((e) => ({
          id: e.id,
          type: e.type,
          data: e.data,
          metadata: e.metadata,
          occurredAt: new Date(e.occurredAt),
        })),
        first.revision === 0 ? 'no_stream' : first.revision - 1,
      );
      from = to;
    }
    if (sameHashes) {
      for (const stream of new Set(events.map((e) => e.stream))) {
        const stored = await store.readStream(stream);
        expect(stored.map((e) => e.hash)).toEqual(
          events.filter((e) => e.stream === stream).map((e) => e.hash),
        );
      }
    }
  } finally {
    await store.close();
  }
  return database;
}

describe('a log written before a served request was one event, read and extended by today’s gateway', () => {
  let database: Database;
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    database = await seed(fixture, true);
    // Today's requests join the old code's month, as on an upgrade mid-month, whenever the test runs.
    const shift = Date.parse((fixture.at(-1) as FixtureEvent).occurredAt) + 60_000 - Date.now();
    gateway = await startTestGateway(
      {},
      { schema: database.schema, clock: () => new Date(Date.now() + shift) },
    );
    key = (await json(await gateway.admin(`/accounts/${accountId}/keys`, { name: 'after' }))).key;
  });
  afterAll(async () => {
    await gateway?.close();
    await database?.close();
  });

  it('passes the audit as the old code left it, holds carved from leases and requests recorded apart', async () => {
    const audit = await runCli(['audit'], gateway.env);
    expect(audit.code, audit.stdout).toBe(0);
    expect(audit.stdout).toMatch(
      new RegExp(
        `^PASS +holds +${holds} holds: ${holds} settled, 0 released, 0 open; ${leases} spend leases \\(0 open\\), ${carved} holds carved from them$`,
        'm',
      ),
    );
    expect(audit.stdout).toMatch(new RegExp(`^PASS +pricing +${holds} charges re-priced`, 'm'));
    expect(audit.stdout).toMatch(/^PASS +read models /m);

    // A request of that log whose hold was carved from a lease, as the request log shows it from its own record.
    const hold = reserved.find((e) => e.data.leaseId !== undefined) as FixtureEvent;
    const record = ofType('RequestCompleted').find((e) => e.data.holdId === hold.data.holdId) as FixtureEvent;
    const settlement = ofType('SpendSettled').find((e) => e.data.holdId === hold.data.holdId) as FixtureEvent;
    const shown = await eventually(
      async () => {
        const response = await fetch(`${gateway.url}/v1/requests/${record.data.requestId}`, {
          headers: { authorization: `Bearer ${key}` },
        });
        return { status: response.status, body: await json(response) };
      },
      (answer) => answer.status === 200,
      5000,
    );
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({
      hold_id: hold.data.holdId,
      status: 200,
      cost_nanos: settlement.data.chargedNanos,
    });
  });

  it('serves more requests on it, passes the audit again, and the balance is top-ups less every charge', async () => {
    const costs: bigint[] = [];
    for (let i = 0; i < 3; i++) {
      const plain = await chat(gateway.url, key, { ...say(`after the change ${i}`), max_tokens: 50 });
      expect(plain.status).toBe(200);
      costs.push(nanosOf(plain.headers.get('x-cost-cents') as string));
    }
    const streamed = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'local/echo',
        stream: true,
        stream_options: { include_usage: true },
        ...say('streamed after the change'),
      }),
    });
    const text = await streamed.text();
    expect(streamed.status).toBe(200);
    expect(text).toContain('data: [DONE]');
    // The raw figure, not a float parsed from the chunk.
    const streamedCost = [...text.matchAll(/"cost_cents":([0-9.e-]+)/g)].map((m) => m[1] as string);
    expect(streamedCost).toHaveLength(1);
    costs.push(nanosOf(streamedCost[0] as string));
    // Cached answers are not events, so none the old code stored comes with its log: a hit of one stored now.
    const cached = { ...say('cached after the change'), temperature: 0, max_tokens: 30 };
    for (const status of ['miss', 'hit']) {
      const call = await chat(gateway.url, key, cached);
      expect(call.status).toBe(200);
      expect(call.headers.get('x-cache-status')).toMatch(new RegExp(`^${status}`));
      costs.push(nanosOf(call.headers.get('x-cost-cents') as string));
    }
    const chargedAfter = costs.reduce((a, b) => a + b, 0n);
    expect(chargedAfter).toBeGreaterThan(0n);

    // What today's code added is one event per served request: each settlement carries the request's record.
    // Read once every settlement is below the store's horizon: an event is read only when no transaction that began
    // before it is still open (a projections' run, say), so the last ones can show a moment after their answers.
    const fixtureIds = new Set(fixture.map((e) => e.id));
    const added = await eventually(
      async () =>
        (await gateway.runtime.store.readAll(START, { maxCount: 1000 })).filter((e) => !fixtureIds.has(e.id)),
      (events) => events.filter((e) => e.type === 'SpendSettled').length >= costs.length,
      5000,
    );
    expect(added.filter((e) => e.type === 'RequestCompleted')).toEqual([]);
    const settled = added.filter((e) => e.type === 'SpendSettled');
    expect(settled).toHaveLength(costs.length);
    for (const e of settled) expect(e.data).toHaveProperty('request.status', 200);

    const audit = await runCli(['audit'], gateway.env);
    expect(audit.code, audit.stdout).toBe(0);
    const all = holds + costs.length;
    expect(audit.stdout).toMatch(
      new RegExp(`^PASS +holds +${all} holds: ${all} settled, 0 released, 0 open; \\d+ spend leases`, 'm'),
    );

    const charged = chargedBefore + chargedAfter;
    const balance = await eventually(
      async () =>
        json(
          await fetch(`${gateway.url}/admin/accounts/${accountId}/balance`, {
            headers: { authorization: `Bearer ${gateway.adminToken}` },
          }),
        ),
      (b) => nanosOf(b.charged_cents) === charged,
      5000,
    );
    expect(nanosOf(balance.topped_up_cents)).toBe(toppedUp);
    expect(nanosOf(balance.charged_cents)).toBe(charged);
    const cents = Number((toppedUp - charged) / 10_000_000n);
    expect(balance.cents).toBe(cents);
    const own = await json(
      await fetch(`${gateway.url}/v1/balance`, { headers: { authorization: `Bearer ${key}` } }),
    );
    expect(own.cents).toBe(cents);
  });
});

describe('the same log with one settlement’s charge changed', () => {
  let database: Database;
  let dataDir: string;
  afterAll(async () => {
    await database?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('fails the audit: it reads the seeded log, not a log of its own', async () => {
    const events = structuredClone(fixture);
    const target = events.find((e) => e.type === 'SpendSettled') as FixtureEvent;
    target.data.chargedNanos = String(BigInt(target.data.chargedNanos as string) + 1n);
    database = await seed(events, false);
    // The CLI audits a store a gateway has set up: its read models' tables, empty here, as nothing folded them.
    await ensureProjectionTables(database.pool, projections);
    dataDir = await mkdtemp(join(tmpdir(), 'gw-older-log-'));
    const audit = await runCli(['audit'], {
      DATABASE_URL: inject('databaseUrl'),
      GATEWAY_DB_SCHEMA: database.schema,
      GATEWAY_DATA_DIR: dataDir,
    });
    expect(audit.code, audit.stdout + audit.stderr).toBe(3);
    // Appended through the store, the change is chained like any event: the audit finds it by what it adds up to.
    expect(audit.stdout).toMatch(/^PASS +hash chains /m);
    expect(audit.stdout).toMatch(/^FAIL +holds /m);
    expect(audit.stdout).toContain(`hold ${target.data.holdId} releases`);
    expect(audit.stdout).toMatch(/^FAIL +pricing /m);
  });
});
