import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

const CLEAN = 100;

describe('one top-up the store cannot keep, among a hundred concurrent ones on the same account', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(async () => gateway?.close());

  /** The body is written by hand so that the NUL travels as the raw JSON escape a client would send. */
  const topUp = (accountId: string, cents: number, referenceJson: string) =>
    fetch(`${gateway.url}/admin/accounts/${accountId}/top-ups`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.adminToken}`, 'content-type': 'application/json' },
      body: `{"cents":${cents},"reference":${referenceJson}}`,
    });

  it('credits every clean top-up and refuses only the poisoned one, with a 4xx', async () => {
    const { account_id: accountId, key } = await json(await gateway.admin('/accounts', { name: 'Poisoned' }));
    const clean = Array.from({ length: CLEAN }, (_, i) => topUp(accountId, i + 1, `"pay-${i}"`));
    const poisoned = topUp(accountId, 1000, '"pay-\\u0000-nul"');
    const lone = topUp(accountId, 1000, '"pay-\\ud800-lone"');
    const responses = await Promise.all([...clean, poisoned, lone]);
    const statuses = responses.map((r) => r.status);
    const bodies = await Promise.all(responses.map((r) => json(r)));

    expect(statuses.slice(0, CLEAN).filter((s) => s !== 200)).toEqual([]);
    for (const body of bodies.slice(0, CLEAN)) expect(body.credited).toBe(true);
    for (const i of [CLEAN, CLEAN + 1]) {
      expect(statuses[i]).toBeGreaterThanOrEqual(400);
      expect(statuses[i]).toBeLessThan(500);
      expect(bodies[i].error).toMatchObject({ type: 'invalid_request_error' });
      expect(bodies[i].error.message).toMatch(/reference/);
    }

    const expected = (CLEAN * (CLEAN + 1)) / 2;
    const balance = await eventually(
      async () =>
        json(await fetch(`${gateway.url}/v1/balance`, { headers: { authorization: `Bearer ${key}` } })),
      (b) => b.cents === expected,
      5000,
    );
    expect(balance.cents).toBe(expected);
  });
});
