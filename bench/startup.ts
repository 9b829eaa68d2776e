/**
 * `npm run bench:startup`: how long a gateway takes to start as the event log grows. A throwaway embedded
 * PostgreSQL gets a real gateway's events (an account opened, a key issued, chat requests held and settled),
 * copied by bulk SQL to STARTUP_EVENTS events (default 1,000,000): per copy a new account with its key, and
 * the requests' budget events under it. The read models are marked current (a running gateway keeps them
 * so), so what is timed is what every start does: the live state's replay of the whole log, and a whole
 * start of the runtime, which leaves a snapshot of the live state, then a start from that snapshot. Reports
 * events/s and the figures extrapolated to 10 million events.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { LiveAccounts } from '../src/accounts/live-state.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { openEventStore } from '../src/eventstore/open.ts';
import { startRuntime } from '../src/runtime.ts';

const target = Number(process.env.STARTUP_EVENTS ?? 1_000_000);
const dataDir = await mkdtemp(join(tmpdir(), 'gw-startup-'));
const env = {
  GATEWAY_DATA_DIR: dataDir,
  LOG_LEVEL: 'silent',
  PORT: '0',
  GATEWAY_DEMO_CREDIT_CENTS: '100000',
};
const log = (line: string) => process.stderr.write(`${line}\n`);

try {
  // A real gateway writes the templates: the demo account, its key and top-up, and a few chat requests.
  const first = await startRuntime(loadConfig(env), { log: () => {} });
  const key = first.demo?.key;
  for (let i = 0; i < 20; i++) {
    const response = await first.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: { model: 'local/echo', messages: [{ role: 'user', content: `hello ${i}` }] },
    });
    if (response.statusCode !== 200)
      throw new Error(`chat answered ${response.statusCode}: ${response.body}`);
  }
  await first.close();

  const database = await openDatabase(loadConfig(env), { whenRunning: 'restart', durable: false });
  const pool = database.pool;
  const { rows: counts } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM events');
  const templateCount = Number(counts[0]?.n);
  const copies = Math.max(0, Math.ceil((target - templateCount) / templateCount));
  log(`${templateCount} template events; copying them ${copies} times`);
  const fill = performance.now();
  const chunk = 2000;
  for (let from = 1; from <= copies; from += chunk) {
    const to = Math.min(copies, from + chunk - 1);
    // Each copy renames every id the templates carry (accounts, keys, streams), so copies are distinct
    // accounts to the live state; event ids are new. The hash chain is not rebuilt: nothing here verifies it.
    await pool.query(
      `INSERT INTO events (id, stream, revision, type, data, metadata, occurred_at, prev_hash, hash)
       SELECT gen_random_uuid(),
              CASE WHEN strpos(e.stream, a.account_id) > 0 THEN replace(e.stream, a.account_id, a.account_id || '_' || c)
                   ELSE e.stream || '-copy' || c END,
              e.revision, e.type,
              replace(replace(e.data::text, a.account_id, a.account_id || '_' || c), '"keyId":"', '"keyId":"' || c || '_')::jsonb,
              e.metadata, e.occurred_at, e.prev_hash, e.hash
         FROM generate_series($1::int, $2::int) AS c
         CROSS JOIN (SELECT * FROM events WHERE position <= $3 ORDER BY position) AS e
         CROSS JOIN (SELECT data->>'accountId' AS account_id FROM events WHERE type = 'AccountOpened' LIMIT 1) AS a
        ORDER BY c, e.position`,
      [from, to, templateCount],
    );
  }
  const { rows: total } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM events');
  const events = Number(total[0]?.n);
  log(`filled ${events} events in ${((performance.now() - fill) / 1000).toFixed(1)} s`);
  const store = await openEventStore(loadConfig(env), database);
  // A running gateway keeps its read models current, so a start resumes them at the head: the copies are
  // marked projected (folding a million events here would take long and is not what a start does).
  await pool.query(
    `UPDATE projection_checkpoints SET (checkpoint, position) = (
       SELECT transaction_id::text || '/' || position, position FROM events ORDER BY transaction_id DESC, position DESC LIMIT 1)`,
  );
  await pool.query('VACUUM ANALYZE events');

  const liveStart = performance.now();
  const live = new LiveAccounts(store);
  await live.start();
  const liveSeconds = (performance.now() - liveStart) / 1000;
  await live.stop();
  await store.close();
  await database.close();

  // The first start replays the whole log and leaves a snapshot of the live state; the next resumes from it.
  const timedStart = async () => {
    const began = performance.now();
    const runtime = await startRuntime(loadConfig(env), { log: () => {} });
    const seconds = (performance.now() - began) / 1000;
    await runtime.close();
    return seconds;
  };
  const runtimeSeconds = await timedStart();
  const snapshotSeconds = await timedStart();
  const sized = await openDatabase(loadConfig(env), { whenRunning: 'restart', durable: false });
  const { rows: snapshotRows } = await sized.pool.query<{ bytes: number; accounts: string }>(
    `SELECT octet_length(state) AS bytes, (SELECT count(*) FROM events WHERE type = 'AccountOpened')::text AS accounts
       FROM live_state_snapshot`,
  );
  await sized.close();

  const perTenMillion = (seconds: number) => ((seconds * 10_000_000) / events).toFixed(1);
  const report = {
    events,
    live_state_replay_s: Number(liveSeconds.toFixed(2)),
    live_state_events_per_s: Math.round(events / liveSeconds),
    runtime_start_s: Number(runtimeSeconds.toFixed(2)),
    runtime_start_from_snapshot_s: Number(snapshotSeconds.toFixed(2)),
    snapshot_bytes: snapshotRows[0]?.bytes,
    accounts: Number(snapshotRows[0]?.accounts),
    extrapolated_10m_live_state_s: Number(perTenMillion(liveSeconds)),
    extrapolated_10m_runtime_start_s: Number(perTenMillion(runtimeSeconds)),
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
