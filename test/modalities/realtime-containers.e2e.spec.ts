import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CODED_FLOOR_BYTES_PER_SECOND } from '../../src/modalities/realtime/meter.ts';
import { costOfSeconds, perMillionSeconds, secondsCoveredBy } from '../../src/modalities/realtime/pricing.ts';
import { runCli } from '../support/cli.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import {
  COMPRESSED_BYTES_PER_SECOND,
  type DeepgramLiveUpstream,
  startDeepgramLiveUpstream,
} from '../upstreams/deepgram-live.ts';
import { streamAudio } from './realtime-client.ts';

// Audio in a container (no `encoding`) or a compressed encoding lasts however long the provider decodes it to, which
// it reports only after the audio. It used to be passed on unheld: 1 cent streamed 500 s and ended below zero. It is
// now held at its worst case (its bytes at the lowest bitrate speech is coded at) before it is passed on, and
// charged as the provider reports it.

/** Nova-3's streaming rate, $0.0077 a minute. */
const UNIT_PRICE = perMillionSeconds(7_700_000n);
const CENT = 10_000_000n;
/** 500 s of audio as the simulator reckons a container (32 kbit/s): 1 cent pays for about 74 s. */
const LONG_CONTAINER = Buffer.alloc(500 * COMPRESSED_BYTES_PER_SECOND);
const container = { model: 'deepgram/nova-3' };

let sim: DeepgramLiveUpstream;
let gateway: TestGateway;
let mainKey: string;
let mainAccount: string;

interface Ledger {
  reservedNanos: bigint[];
  chargedNanos: bigint;
  settledSeconds: number[];
  overrunNanos: bigint;
}

interface LedgerEventData {
  amountNanos?: string;
  chargedNanos?: string;
  overrunNanos?: string;
  charge?: { units: number };
}

/** The stream's holds and charges as the budget log has them (settled before the socket closes). */
async function ledgerOf(requestId: unknown): Promise<Ledger> {
  const { rows } = await gateway.runtime.database.pool.query<{ type: string; data: LedgerEventData }>(
    `SELECT type, data FROM events WHERE data->>'requestId' = $1
       AND type IN ('SpendReserved', 'SpendSettled', 'SpendOverrun') ORDER BY position`,
    [requestId],
  );
  const ledger: Ledger = { reservedNanos: [], chargedNanos: 0n, settledSeconds: [], overrunNanos: 0n };
  for (const { type, data } of rows) {
    if (type === 'SpendReserved') ledger.reservedNanos.push(BigInt(data.amountNanos ?? 'x'));
    if (type === 'SpendSettled') {
      ledger.chargedNanos += BigInt(data.chargedNanos ?? 'x');
      ledger.settledSeconds.push(data.charge?.units ?? -1);
    }
    if (type === 'SpendOverrun') {
      ledger.chargedNanos += BigInt(data.overrunNanos ?? 'x');
      ledger.overrunNanos += BigInt(data.overrunNanos ?? 'x');
    }
  }
  return ledger;
}

async function account(name: string, cents: number): Promise<{ id: string; key: string }> {
  const created = await json(await gateway.admin('/accounts', { name }));
  await gateway.admin(`/accounts/${created.account_id}/top-ups`, { cents, reference: `funding-${name}` });
  return { id: created.account_id, key: created.key };
}

async function subAccount(parentKey: string, name: string, capCents: number) {
  const response = await fetch(`${gateway.url}/v1/sub-accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${parentKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, spend_cap_cents: capCents }),
  });
  return json(response);
}

async function balanceCents(key: string): Promise<number> {
  return (
    await json(await fetch(`${gateway.url}/v1/balance`, { headers: { authorization: `Bearer ${key}` } }))
  ).cents;
}

beforeAll(async () => {
  sim = await startDeepgramLiveUpstream();
  gateway = await startTestGateway({ DEEPGRAM_API_KEY: 'upstream-deepgram', DEEPGRAM_BASE_URL: sim.url });
  ({ id: mainAccount, key: mainKey } = await account('containers', 10_000));
});
afterAll(async () => {
  await gateway?.close();
  await sim?.close();
});

describe('GET /v1/realtime with container audio', () => {
  it('holds the worst case of the bytes before passing them on, and stops at the balance with an Error and 4402', async () => {
    const poor = await account('one-cent', 1);
    const result = await streamAudio(gateway.url, { ...container, api_key: poor.key }, LONG_CONTAINER);

    expect(result.code).toBe(4402);
    const error = result.messages.find((m) => m.type === 'Error');
    expect(error).toMatchObject({ error: { type: 'insufficient_balance', code: 402 } });
    expect(error.message).toMatch(/^Insufficient balance: /);
    expect(result.messages.at(-1)).toMatchObject({ type: 'Metadata' });

    // The cent holds a minute, then the 14 s the rest pays for: the bytes passed on are the most that could last
    // 74 s, 74 × 750 bytes, and not one more.
    const heldSeconds = 60 + secondsCoveredBy(CENT - costOfSeconds(60, UNIT_PRICE), UNIT_PRICE, 60);
    expect(heldSeconds).toBe(74);
    const passed = sim.streams.at(-1)?.bytes ?? 0;
    expect(passed).toBe(heldSeconds * CODED_FLOOR_BYTES_PER_SECOND);

    // Charged what the provider reported those bytes to be (13.875 s, a started second counting), within the cent.
    const ledger = await ledgerOf(result.headers['x-request-id']);
    const reported = result.messages.at(-1).duration;
    expect(reported).toBe(passed / COMPRESSED_BYTES_PER_SECOND);
    expect(ledger.settledSeconds).toEqual([Math.ceil(reported)]);
    expect(ledger.chargedNanos).toBe(costOfSeconds(Math.ceil(reported), UNIT_PRICE));
    expect(ledger.overrunNanos).toBe(0n);
    expect(ledger.chargedNanos).toBeLessThanOrEqual(CENT);
    expect(await balanceCents(poor.key)).toBeGreaterThanOrEqual(0);
    const audit = await runCli(['audit', '--account', poor.id], gateway.env);
    expect(audit.code, audit.stdout).toBe(0);
  });

  it('never charges a sub-account past its 1 cent cap', async () => {
    const sub = await subAccount(mainKey, 'container-listener', 1);
    const result = await streamAudio(gateway.url, { ...container, api_key: sub.key }, LONG_CONTAINER);

    expect(result.code).toBe(4402);
    const error = result.messages.find((m) => m.type === 'Error');
    expect(error).toMatchObject({ error: { type: 'budget_exceeded', code: 402 } });
    expect(error.message).toContain(`Spend cap of sub-account ${sub.id} reached`);
    const ledger = await ledgerOf(result.headers['x-request-id']);
    expect(ledger.overrunNanos).toBe(0n);
    expect(ledger.chargedNanos).toBeGreaterThan(0n);
    expect(ledger.chargedNanos).toBeLessThanOrEqual(CENT);
    expect(await balanceCents(sub.key)).toBeGreaterThanOrEqual(0);
  });

  it("charges a whole container stream the provider's reported duration, though its worst case was held", async () => {
    const audio = Buffer.alloc(130 * COMPRESSED_BYTES_PER_SECOND);
    const result = await streamAudio(gateway.url, { ...container, api_key: mainKey }, audio);

    expect(result.code).toBe(1000);
    expect(result.messages.at(-1)).toMatchObject({ type: 'Metadata', duration: 130 });
    const ledger = await ledgerOf(result.headers['x-request-id']);
    // Held: at least what 520,000 bytes could last at the floor (694 s), in slices of 60, 60, 120, 240 and 480 s.
    const worstSeconds = Math.ceil(audio.length / CODED_FLOOR_BYTES_PER_SECOND);
    const held = ledger.reservedNanos.reduce((sum, amount) => sum + amount, 0n);
    expect(held).toBeGreaterThanOrEqual(costOfSeconds(worstSeconds, UNIT_PRICE));
    expect(ledger.reservedNanos).toEqual([60, 60, 120, 240, 480].map((s) => costOfSeconds(s, UNIT_PRICE)));
    // Charged: the 130 s the provider reported, by the slices it reached; the slices beyond it released.
    expect(ledger.settledSeconds).toEqual([60, 60, 10]);
    expect(ledger.chargedNanos).toBe([60, 60, 10].reduce((sum, s) => sum + costOfSeconds(s, UNIT_PRICE), 0n));
    expect(ledger.overrunNanos).toBe(0n);
  });
});

describe('GET /v1/realtime when the provider reports more than the worst case held', () => {
  it('charges the overrun, and the audit fails it for taking a sub-account past its cap', async () => {
    const parent = await account('sparse-audio', 10_000);
    const sub = await subAccount(parent.key, 'sparse-listener', 1);
    // Audio coded at 600 bit/s, a tenth of the floor: the first 10,000 bytes already decode to 133 s.
    sim.script({ kind: 'ok', codedBytesPerSecond: 75 });
    const result = await streamAudio(gateway.url, { ...container, api_key: sub.key }, Buffer.alloc(200_000), {
      frame: 10_000,
    });

    expect(result.code).toBe(4402);
    expect(result.messages.find((m) => m.type === 'Error')).toMatchObject({
      error: { type: 'budget_exceeded', code: 402 },
    });
    const ledger = await ledgerOf(result.headers['x-request-id']);
    const reported = result.messages.at(-1).duration;
    expect(reported).toBeGreaterThanOrEqual(133);
    // The provider's whole report is charged, never dropped: the held cent, and the rest as an overrun.
    expect(ledger.settledSeconds.reduce((sum, s) => sum + s, 0)).toBe(Math.ceil(reported));
    expect(ledger.overrunNanos).toBeGreaterThan(0n);
    expect(ledger.chargedNanos).toBeGreaterThan(CENT);

    const audit = await runCli(['audit', '--account', parent.id], gateway.env);
    expect(audit.code, audit.stdout).toBe(3);
    expect(audit.stdout).toMatch(/^FAIL +caps /m);
    expect(audit.stdout).toContain(`spends past sub-account ${sub.id}'s cap (cap $0.010000000,`);
    // The accounts whose streams stayed within their holds still pass.
    const honest = await runCli(['audit', '--account', mainAccount], gateway.env);
    expect(honest.code, honest.stdout).toBe(0);
  });
});
