import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { NANOS_PER_CENT } from '../../events/money.ts';
import { HandshakeRefused, type Streamed, streamAudio } from '../modalities/realtime-client.ts';
import { runCli } from '../support/cli.ts';
import { dropSchema } from '../support/database.ts';
import { eventually } from '../support/gateway.ts';
import { type DeepgramLiveUpstream, startDeepgramLiveUpstream } from '../upstreams/deepgram-live.ts';
import { type FaultGateway, send, startFaultGateway } from './fault-gateway.ts';

// Container audio (no `encoding`) is held at its worst case before it is passed on and charged as the provider
// reports it. Many such streams at once, over two instances on one PostgreSQL, against one small cap: one provider
// decodes the bytes at exactly the gateway's floor (the worst case is the truth, so the cap is used to the last
// second), the other at 32 kbit/s (the worst case is five times the truth); a quarter of the clients vanish
// mid-stream. No stream may spend past the cap, none may overrun its holds, and the audit must pass.

const WAVES = 3;
const STREAMS_PER_WAVE = 12;
const CAP_CENTS = 20;
const SECONDS_PER_STREAM = 120;
/** The gateway's floor (6 kbit/s), and the simulator's usual container rate (32 kbit/s). */
const RATES = [750, 4000] as const;

type Outcome = 'metadata-1000' | 'cap-4402' | 'dropped' | 'refused-402' | string;

describe('concurrent container streams over two instances against one spend cap', () => {
  const schema = `rt_${randomBytes(6).toString('hex')}`;
  const sims: DeepgramLiveUpstream[] = [];
  const gateways: FaultGateway[] = [];
  let subKey = '';
  let subId = '';

  beforeAll(async () => {
    for (const rate of RATES) sims.push(await startDeepgramLiveUpstream({ codedBytesPerSecond: rate }));
    const env = (sim: DeepgramLiveUpstream) => ({
      DATABASE_URL: inject('databaseUrl'),
      GATEWAY_DB_SCHEMA: schema,
      DEEPGRAM_API_KEY: 'upstream-deepgram',
      DEEPGRAM_BASE_URL: sim.url,
    });
    // The first creates the schema; the second joins it.
    gateways.push(await startFaultGateway(env(sims[0] as DeepgramLiveUpstream)));
    gateways.push(await startFaultGateway(env(sims[1] as DeepgramLiveUpstream)));
    const [first] = gateways as [FaultGateway];
    const account = (await first.admin('/accounts', { name: 'realtime-money' })).json as Record<
      string,
      string
    >;
    await first.admin(`/accounts/${account.account_id}/top-ups`, { cents: 100_000, reference: 'funding' });
    await first.admin(`/accounts/${account.account_id}/settings`, { rate_limit_rpm: 1_000_000 });
    const sub = (
      await send(first.url, {
        method: 'POST',
        path: '/v1/sub-accounts',
        headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'listener', spend_cap_cents: CAP_CENTS, rate_limit_rpm: 1_000_000 }),
      })
    ).json as { id: string; key: string };
    subKey = sub.key;
    subId = sub.id;
    for (const g of gateways) {
      await eventually(
        async () =>
          (
            await send(g.url, {
              method: 'GET',
              path: '/v1/balance',
              headers: { authorization: `Bearer ${subKey}` },
            })
          ).json as { cents?: number },
        (b) => b.cents === CAP_CENTS,
        10_000,
      );
    }
  });
  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.stop()));
    await Promise.all(sims.map((s) => s.close()));
    await dropSchema(schema);
  });

  it('never spends past the cap, never overruns a hold, ends every hold and passes the audit', async () => {
    const outcomes = new Map<Outcome, number>();
    const count = (outcome: Outcome) => outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    const started = Date.now();
    for (let wave = 0; wave < WAVES; wave++) {
      await Promise.all(
        Array.from({ length: STREAMS_PER_WAVE }, async (_, i) => {
          const instance = i % 2;
          const audio = Buffer.alloc(SECONDS_PER_STREAM * (RATES[instance] as number));
          const drop = i % 4 === 3;
          try {
            const result = await streamAudio(
              (gateways[instance] as FaultGateway).url,
              { model: 'deepgram/nova-3', api_key: subKey },
              audio,
              { frame: 8_000, ...(drop && { dropAfter: audio.length / 2 }) },
            );
            count(outcomeOf(result, drop));
          } catch (error) {
            count(error instanceof HandshakeRefused ? `refused-${error.status}` : String(error));
          }
        }),
      );
    }
    const seconds = (Date.now() - started) / 1000;

    const client = new pg.Client({ connectionString: inject('databaseUrl') });
    await client.connect();
    try {
      // Streams whose client vanished finish with the provider a moment later; every hold must end.
      const open = await eventually(
        async () =>
          Number(
            (
              await client.query<{ n: string }>(
                `SELECT count(*) AS n FROM "${schema}".holds WHERE sub_account_id = $1 AND status = 'open'`,
                [subId],
              )
            ).rows[0]?.n,
          ),
        (n) => n === 0,
        20_000,
      );
      const { rows } = await client.query<{ type: string; amount: string }>(
        `SELECT type, coalesce(data->>'chargedNanos', data->>'overrunNanos') AS amount FROM "${schema}".events
         WHERE type IN ('SpendSettled', 'SpendOverrun') AND data->>'subAccountId' = $1`,
        [subId],
      );
      const chargedNanos = rows.reduce((sum, row) => sum + BigInt(row.amount), 0n);
      const overruns = rows.filter((row) => row.type === 'SpendOverrun').length;
      const audit = await runCli(['audit'], (gateways[0] as FaultGateway).env);
      const charged = Number(chargedNanos) / Number(NANOS_PER_CENT);
      console.log(
        `FAULTS realtime-money instances=${gateways.length} streams=${WAVES * STREAMS_PER_WAVE} seconds=${Math.round(seconds)} ` +
          `outcomes=${[...outcomes].map(([o, n]) => `${o}:${n}`).join(',')} cap_cents=${CAP_CENTS} ` +
          `charged_cents=${charged.toFixed(4)} charges=${rows.length} overruns=${overruns} open_holds=${open} ` +
          `audit_exit=${audit.code}`,
      );
      if (audit.code !== 0) console.log(`FAULTS realtime-money audit said: ${audit.stdout.slice(0, 2000)}`);

      const expected = new Set(['metadata-1000', 'cap-4402', 'dropped', 'refused-402']);
      expect([...outcomes.keys()].filter((o) => !expected.has(o))).toEqual([]);
      expect(outcomes.get('cap-4402') ?? 0).toBeGreaterThan(0);
      expect(chargedNanos).toBeGreaterThan(0n);
      expect(chargedNanos).toBeLessThanOrEqual(BigInt(CAP_CENTS) * NANOS_PER_CENT);
      expect(overruns).toBe(0);
      expect(open).toBe(0);
      expect(audit.stdout).toContain('Result: PASS');
      expect(audit.code).toBe(0);
    } finally {
      await client.end();
    }
  });
});

/** What a stream that opened came to: a normal end, the cap's cut-off with its Error first, or our own drop. */
function outcomeOf(result: Streamed, dropped: boolean): Outcome {
  if (dropped) return 'dropped';
  const last = result.messages.at(-1);
  if (result.code === 1000 && last?.type === 'Metadata') return 'metadata-1000';
  const error = result.messages.find((m) => m.type === 'Error');
  if (result.code === 4402 && error?.error?.type === 'budget_exceeded' && last?.type === 'Metadata')
    return 'cap-4402';
  return `closed-${result.code}-${JSON.stringify(error ?? last ?? null).slice(0, 200)}`;
}
