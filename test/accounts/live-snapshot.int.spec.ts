import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  decodeSnapshot,
  encodeSnapshot,
  LIVE_SNAPSHOT_VERSION,
  type LiveSnapshots,
  postgresLiveSnapshots,
} from '../../src/accounts/live-snapshot.ts';
import { LiveAccounts } from '../../src/accounts/live-state.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

let gateway: TestGateway;
const lines: string[] = [];
const snapshots = () =>
  postgresLiveSnapshots(gateway.runtime.database.pool, gateway.runtime.store, (l) => lines.push(l));

/** Opens an account with a key, a revoked key, a top-up, settings, a tag budget and a sub-account. */
async function busyAccount(name: string) {
  const accounts = gateway.runtime.accounts;
  const opened = await accounts.createAccount(name);
  const spare = await accounts.createKey(opened.account_id);
  await accounts.revokeKey(spare.key_id);
  await accounts.topUp(opened.account_id, 1234, `ref-${name}`);
  await accounts.changeSettings(opened.account_id, { rateLimitRpm: 77, requestBodies: 'drop' });
  await accounts.setTagBudget(opened.account_id, 'nightly', 250);
  const sub = await fetch(`${gateway.url}/v1/sub-accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${opened.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `${name} customer`, spend_cap_cents: 100 }),
  });
  expect(sub.status).toBe(200);
  return { ...opened, spare: spare.key, sub: (await json(sub)) as { id: string; key: string } };
}

async function started(live: LiveAccounts): Promise<LiveAccounts> {
  await live.start();
  return live;
}

beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(async () => {
  await gateway?.close();
});

describe('live state snapshots', () => {
  it('a start from a snapshot plus the tail equals a replay of the whole log', async () => {
    const first = await busyAccount('first');
    const taker = await started(new LiveAccounts(gateway.runtime.store, snapshots()));
    await taker.stop(); // waits for the snapshot taken at start
    const saved = await snapshots().load();
    expect(saved?.checkpoint).toBe(taker.position());

    // The tail: events after the snapshot change what it holds.
    const second = await busyAccount('second');
    await gateway.runtime.accounts.revokeKey(first.key_id);
    await gateway.runtime.accounts.topUp(first.account_id, 1, 'ref-late');

    let loaded = false;
    const spied: LiveSnapshots = {
      load: async () => {
        const snapshot = await snapshots().load();
        loaded = snapshot !== undefined;
        return snapshot;
      },
      save: async () => {},
    };
    const resumed = await started(new LiveAccounts(gateway.runtime.store, spied));
    const replayed = await started(new LiveAccounts(gateway.runtime.store));
    try {
      expect(loaded).toBe(true);
      expect(resumed.position()).toBe(replayed.position());
      expect(resumed.snapshot()).toEqual(replayed.snapshot());
      expect(resumed.authenticate(first.key)).toBeUndefined();
      expect(resumed.authenticate(first.spare)).toBeUndefined();
      expect(resumed.authenticate(second.key)?.accountId).toBe(second.account_id);
      expect(resumed.authenticate(first.sub.key)?.subAccountId).toBe(first.sub.id);
      expect(resumed.account(first.account_id)).toMatchObject({
        toppedUpNanos: 12_350_000_000n,
        rateLimitRpm: 77,
        requestBodies: 'drop',
        tagBudgets: new Map([['nightly', 2_500_000_000n]]),
      });
    } finally {
      await resumed.stop();
      await replayed.stop();
    }
  });

  it('round-trips bigints, dates and maps', async () => {
    const live = await started(new LiveAccounts(gateway.runtime.store));
    const snapshot = live.snapshot();
    await live.stop();
    expect(snapshot).toBeDefined();
    expect(decodeSnapshot(encodeSnapshot(snapshot as never))).toEqual(snapshot);
  });

  it('ignores a snapshot the log does not hold, or of another version', async () => {
    const pool = gateway.runtime.database.pool;
    const live = await started(new LiveAccounts(gateway.runtime.store));
    const snapshot = live.snapshot();
    await live.stop();
    if (!snapshot) throw new Error('no snapshot');
    await snapshots().save({
      ...snapshot,
      last: { ...snapshot.last, id: '00000000-0000-4000-8000-000000000000' },
    });
    expect(await snapshots().load()).toBeUndefined();
    expect(lines.at(-1)).toContain('does not hold its last event');
    await snapshots().save(snapshot);
    await pool.query('UPDATE live_state_snapshot SET version = $1', [LIVE_SNAPSHOT_VERSION + 1]);
    expect(await snapshots().load()).toBeUndefined();
    expect(lines.at(-1)).toContain(`version ${LIVE_SNAPSHOT_VERSION + 1} ignored`);
  });
});
