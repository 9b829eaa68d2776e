import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { categoryOf } from '../../events/categories.ts';
import { type EventType, eventSchemas } from '../../events/index.ts';
import { projections } from '../../projections/index.ts';
import type { Database } from '../../src/db/database.ts';
import type { PostgresEventStore } from '../../src/eventstore/postgres/store.ts';
import { ensureProjectionTables } from '../../src/projections/tables.ts';
import { runCli } from '../support/cli.ts';
import { testDatabase, testStore } from '../support/database.ts';
import { type Sample, sampleEveryEventType } from './event-samples.ts';

// The audit's schema check must know every event type the gateway can write: a type it did not (CachePurged)
// turned every later audit red for good. One event of each type in the catalogue, built from its schema, each in a
// stream of its own category; the audit may find the made-up amounts inconsistent, never the events misplaced, and
// an audit of the one account they name must see every one of them that names an account.

let database: Database;
let store: PostgresEventStore;
let dataDir: string;
let samples: Sample[];

beforeAll(async () => {
  database = await testDatabase();
  store = await testStore(database);
  await ensureProjectionTables(database.pool, projections);
  dataDir = await mkdtemp(join(tmpdir(), 'gw-every-event-'));
  samples = sampleEveryEventType();
  for (const { type, stream, data } of samples)
    await store.append(stream, [{ id: randomUUID(), type, data, metadata: { schemaVersion: 1 } }], 'any');
});
afterAll(async () => {
  await store?.close();
  await database?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('the audit over one event of every type', () => {
  it('has a sample of every type in the catalogue', () => {
    expect(samples.map((s) => s.type).sort()).toEqual((Object.keys(eventSchemas) as EventType[]).sort());
  });

  const audit = (args: string[]) =>
    runCli(['audit', ...args], {
      DATABASE_URL: inject('databaseUrl'),
      GATEWAY_DB_SCHEMA: database.schema,
      GATEWAY_DATA_DIR: dataDir,
    });
  const schemasPass = (count: number) =>
    new RegExp(`^PASS +schemas +${count} of ${count} events valid, each in its own stream$`, 'm');

  it('finds each event valid and in its own stream', async () => {
    const all = await audit([]);
    // 0 or 3 (made-up amounts need not add up); 1 would be an audit that could not run.
    expect([0, 3], all.stderr).toContain(all.code);
    expect(all.stdout).toMatch(schemasPass(samples.length));
    expect(all.stdout).not.toMatch(/belongs in|has no stream category/);
  });

  it('counts every event but the operator’s own (catalog, credentials, reconciliations) in the audit of the one account they all name', async () => {
    const one = await audit(['--account', 'account_every']);
    expect([0, 3], one.stderr).toContain(one.code);
    // The operator's own streams name no account.
    const operators = new Set(['catalog', 'credential', 'reconciliation']);
    const named = samples.filter((s) => !operators.has(categoryOf(s.type) ?? '')).length;
    expect(one.stdout).toMatch(schemasPass(named));
  });
});
