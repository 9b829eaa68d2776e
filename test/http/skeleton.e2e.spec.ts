import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

let gateway: TestGateway;
let accountId: string;
let key: string;
let keyId: string;

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}${path}`, { headers });
const withKey = (k: string) => ({ authorization: `Bearer ${k}` });

beforeAll(async () => {
  gateway = await startTestGateway();
  const created = await json(await gateway.admin('/accounts', { name: 'acme' }));
  ({ account_id: accountId, key, key_id: keyId } = created);
});
afterAll(async () => {
  await gateway?.close();
});

describe('authentication', () => {
  it.each([
    ['missing', {}],
    ['not a bearer token', { authorization: 'Basic abc' }],
    ['malformed', withKey('sk-live-123')],
    ['unknown', withKey(`sk-gw-${'A'.repeat(43)}`)],
  ])('refuses a %s key with 401 authentication_error', async (_, headers) => {
    const response = await get('/v1/balance', headers as Record<string, string>);
    expect(response.status).toBe(401);
    const body = await json(response);
    expect(body).toEqual({
      error: { message: expect.any(String), type: 'authentication_error', param: null, code: 401 },
    });
  });

  it('accepts a live key and refuses it within a second of its revocation', async () => {
    const extra = await json(await gateway.admin(`/accounts/${accountId}/keys`));
    expect(extra.key).toMatch(/^sk-gw-/);
    expect((await get('/v1/balance', withKey(extra.key))).status).toBe(200);
    expect((await gateway.admin(`/keys/${extra.key_id}/revoke`)).status).toBe(200);
    const after = await eventually(
      () => get('/v1/balance', withKey(extra.key)),
      (r) => r.status === 401,
    );
    expect(after.status).toBe(401);
    expect((await get('/v1/balance', withKey(key))).status).toBe(200);
  });

  it('keeps admin routes closed to API keys and open only to the admin token', async () => {
    const withApiKey = await fetch(`${gateway.url}/admin/accounts`, {
      method: 'POST',
      headers: { ...withKey(key), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x' }),
    });
    expect(withApiKey.status).toBe(403);
    expect((await json(withApiKey)).error.type).toBe('permission_error');
    const wrongToken = await fetch(`${gateway.url}/admin/health`, { headers: withKey('gw-admin-wrong') });
    expect(wrongToken.status).toBe(401);
    const adminOnV1 = await get('/v1/balance', withKey(gateway.adminToken));
    expect(adminOnV1.status).toBe(401);
  });
});

describe('balance', () => {
  it('reports the projected balance in cents and dollars', async () => {
    expect(await json(await get('/v1/balance', withKey(key)))).toEqual({ cents: 0, usd: 0 });
    const topUp = await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 1234, reference: 'pay_1' });
    expect(await json(topUp)).toMatchObject({ credited: true, cents: 1234 });
    const again = await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 1234, reference: 'pay_1' });
    expect(await json(again)).toMatchObject({ credited: false });
    const balance = await eventually(
      async () => json(await get('/v1/balance', withKey(key))),
      (b) => b.cents === 1234,
    );
    expect(balance).toEqual({ cents: 1234, usd: 12.34 });
    expect(gateway.runtime.live.account(accountId)?.toppedUpNanos).toBe(12_340_000_000n);
  });

  it('refuses the same reference with another amount', async () => {
    const response = await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 5, reference: 'pay_1' });
    expect(response.status).toBe(409);
    expect((await json(response)).error).toMatchObject({ type: 'conflict_error', code: 409 });
  });
});

describe('the largest balance', () => {
  it('refuses a top-up that would take the balance past what it can answer in cents, and keeps answering it', async () => {
    const big = await json(await gateway.admin('/accounts', { name: 'whale' }));
    const most = Number.MAX_SAFE_INTEGER;
    expect(
      (await gateway.admin(`/accounts/${big.account_id}/top-ups`, { cents: most, reference: 'all' })).status,
    ).toBe(200);
    const over = await gateway.admin(`/accounts/${big.account_id}/top-ups`, { cents: 5, reference: 'more' });
    expect(over.status).toBe(400);
    const refusal = (await json(over)).error;
    expect(refusal).toMatchObject({ type: 'invalid_request_error', code: 400 });
    expect(refusal.message).toContain("'cents'");
    const balance = await eventually(
      async () => {
        const response = await get('/v1/balance', withKey(big.key));
        return { status: response.status, body: await json(response) };
      },
      (answer) => answer.status !== 200 || answer.body.cents === most,
      5000,
    );
    expect(balance).toMatchObject({ status: 200, body: { cents: most } });
  });
});

describe('errors and request ids', () => {
  it('answers an unknown path with 404 in the error shape', async () => {
    const response = await get('/v1/does-not-exist', withKey(key));
    expect(response.status).toBe(404);
    expect(await json(response)).toEqual({
      error: {
        message: 'Unknown request URL: GET /v1/does-not-exist',
        type: 'not_found_error',
        param: null,
        code: 404,
      },
    });
  });

  it('answers malformed JSON with 400 invalid_request_error', async () => {
    const response = await fetch(`${gateway.url}/admin/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.adminToken}`, 'content-type': 'application/json' },
      body: '{"name": ',
    });
    expect(response.status).toBe(400);
    const body = await json(response);
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 400 });
    expect(body.error.message).toMatch(/JSON/);
  });

  it('names the field that breaks the schema', async () => {
    const response = await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 'ten', reference: 'r' });
    expect(response.status).toBe(400);
    const body = await json(response);
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toContain('cents');
    const missing = await gateway.admin('/accounts', {});
    expect((await json(missing)).error.message).toContain('name');
  });

  it('answers an unknown account or key with 404', async () => {
    const account = await gateway.admin('/accounts/acct_missing/top-ups', { cents: 1, reference: 'x' });
    expect(account.status).toBe(404);
    const revoke = await gateway.admin('/keys/key_missing/revoke');
    expect(revoke.status).toBe(404);
    expect((await json(revoke)).error.message).toContain('key_missing');
  });

  it('echoes X-Request-Id, or generates a UUID; X-Gw-Request-Id is always the gateway’s own', async () => {
    const echoed = await get('/v1/balance', { ...withKey(key), 'x-request-id': 'req-123' });
    expect(echoed.headers.get('x-request-id')).toBe('req-123');
    expect(echoed.headers.get('x-gw-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const generated = await get('/v1/balance', withKey(key));
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(generated.headers.get('x-gw-request-id')).toBe(generated.headers.get('x-request-id'));
    const onError = await get('/v1/balance', { 'x-request-id': 'req-401' });
    expect(onError.headers.get('x-request-id')).toBe('req-401');
    expect(onError.headers.get('x-gw-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('records the gateway’s request id as the correlation id of the events it caused', async () => {
    const response = await fetch(`${gateway.url}/admin/accounts/${accountId}/top-ups`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${gateway.adminToken}`,
        'content-type': 'application/json',
        'x-request-id': 'corr-42',
      },
      body: JSON.stringify({ cents: 1, reference: 'pay_corr' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('corr-42');
    const events = await gateway.runtime.store.readStream(`account-${accountId}`);
    expect(
      events.find(
        (e) => e.type === 'AccountToppedUp' && (e.data as { reference: string }).reference === 'pay_corr',
      )?.metadata,
    ).toMatchObject({ schemaVersion: 1, correlationId: response.headers.get('x-gw-request-id') });
    expect(keyId).toMatch(/^key_/);
  });
});
