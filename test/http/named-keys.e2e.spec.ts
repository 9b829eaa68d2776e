import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Json, json } from '../support/json.ts';

/**
 * Named keys (issue 32, item 5): several keys per account and per sub-account, created, listed with their last use,
 * rotated with a grace period and revoked, over two instances sharing one store and one clock, so that "on every
 * instance at once" is what the second instance answers to the very next request.
 */
let a: TestGateway;
let b: TestGateway;
let now = Math.floor(Date.now() / 1000) * 1000 + 500;
const clock = () => new Date(now);
const unix = () => Math.floor(now / 1000);
let main: string;
let accountId: string;

const call = async (gateway: TestGateway, method: string, path: string, key: string, body?: unknown) => {
  const response = await fetch(`${gateway.url}/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await json(response) };
};
const sdk = (gateway: TestGateway, key: string) =>
  new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
const ask = (gateway: TestGateway, key: string, text = 'hello') =>
  sdk(gateway, key).chat.completions.create({
    model: 'local/echo',
    messages: [{ role: 'user', content: text }],
  });
/** The SDK's error for a call expected to fail: its status and the gateway's error body. */
const refusal = async (gateway: TestGateway, key: string) => {
  const error = await ask(gateway, key).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  const failure = error as InstanceType<typeof OpenAI.APIError>;
  return {
    status: failure.status,
    error: failure.error as { message: string; type: string; param: string | null },
  };
};

beforeAll(async () => {
  a = await startTestGateway({}, { clock });
  b = await startTestGateway({}, { clock, schema: a.env.GATEWAY_DB_SCHEMA });
  ({ account_id: accountId, key: main } = await json(await a.admin('/accounts', { name: 'reseller' })));
  await a.admin(`/accounts/${accountId}/top-ups`, { cents: 5000, reference: 'funding' });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

describe("a sub-account's named keys", () => {
  let sub: Json;
  let ci: Json;

  it('creates a key shown once that works at once on every instance, under the sub-account', async () => {
    sub = (await call(a, 'POST', '/sub-accounts', main, { name: 'Customer', spend_cap_cents: 100 })).body;
    const created = await call(a, 'POST', `/sub-accounts/${sub.id}/keys`, main, { name: 'ci' });
    expect(created.status).toBe(200);
    ci = created.body;
    expect(ci).toEqual({
      object: 'api_key',
      id: expect.stringMatching(/^key_[0-9a-f]{24}$/),
      name: 'ci',
      key: expect.stringMatching(/^sk-gw-/),
      prefix: ci.key.slice(0, 12),
      sub_account_id: sub.id,
      created_at: unix(),
      expires_at: null,
    });
    // The other instance knows it before the creation answered: no wait, no retry.
    const answer = await ask(b, ci.key);
    expect(answer.choices[0]?.message.content).toBe('hello');
    const logged = await eventually(
      () => call(a, 'GET', `/requests?sub_account_id=${sub.id}`, main),
      (r) => r.body.data?.length === 1,
      3000,
    );
    expect(logged.body.data[0]).toMatchObject({
      sub_account_id: sub.id,
      key_id: ci.id,
      key_name: 'ci',
      status: 200,
    });
  });

  it('lists its keys, the first one as default, with when each was last used', async () => {
    const listed = await eventually(
      () => call(a, 'GET', `/sub-accounts/${sub.id}/keys`, main),
      (r) => r.body.data?.some((k: Json) => k.id === ci.id && k.last_used_at !== null),
      3000,
    );
    expect(listed.body.object).toBe('list');
    expect(listed.body.data).toEqual([
      {
        object: 'api_key',
        id: expect.stringMatching(/^key_/),
        name: 'default',
        prefix: sub.key.slice(0, 12),
        sub_account_id: sub.id,
        created_at: expect.any(Number),
        last_used_at: null,
        expires_at: null,
      },
      expect.objectContaining({ id: ci.id, name: 'ci', prefix: ci.prefix, last_used_at: expect.any(Number) }),
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(ci.key);
  });

  it('rotates a key: the old one works on every instance for the grace period, then stops', async () => {
    const rotated = await call(a, 'POST', `/sub-accounts/${sub.id}/keys/${ci.id}/rotate`, main, {
      grace_seconds: 60,
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({
      name: 'ci',
      key: expect.stringMatching(/^sk-gw-/),
      replaces: ci.id,
      replaced_key_expires_at: unix() + 61,
      expires_at: null,
    });
    for (const gateway of [a, b]) {
      expect((await ask(gateway, ci.key)).choices).toHaveLength(1);
      expect((await ask(gateway, rotated.body.key)).choices).toHaveLength(1);
    }
    // 60 s to the millisecond; the end is announced in whole seconds, rounded up.
    const ends = now + 60_000;
    now = ends - 1;
    expect((await ask(b, ci.key)).choices).toHaveLength(1);
    now = ends;
    for (const gateway of [a, b]) {
      const refused = await refusal(gateway, ci.key);
      expect(refused.status).toBe(401);
      expect(refused.error.message).toMatch(
        /^Expired API key: it expired at \d{4}-\d\d-\d\dT[\d:.]+Z; use a current key$/,
      );
      expect((await ask(gateway, rotated.body.key)).choices).toHaveLength(1);
    }
    const listed = await call(a, 'GET', `/sub-accounts/${sub.id}/keys`, main);
    expect(listed.body.data.map((k: Json) => [k.name, k.id])).toEqual([
      ['default', expect.any(String)],
      ['ci', rotated.body.id],
    ]);
    ci = rotated.body;
  });

  it('revokes a key on every instance before the call answers', async () => {
    expect((await ask(b, sub.key)).choices).toHaveLength(1);
    const keys = (await call(a, 'GET', `/sub-accounts/${sub.id}/keys`, main)).body.data as Json[];
    const first = keys.find((k) => k.name === 'default')?.id;
    const revoked = await call(a, 'DELETE', `/sub-accounts/${sub.id}/keys/${first}`, main);
    expect(revoked).toEqual({
      status: 200,
      body: { object: 'api_key', id: expect.any(String), sub_account_id: sub.id, deleted: true },
    });
    const refused = await refusal(b, sub.key);
    expect(refused).toMatchObject({ status: 401, error: { message: 'Invalid API key: unknown or revoked' } });
    // Its other keys go on, under the same cap.
    expect((await ask(b, ci.key)).choices).toHaveLength(1);
  });

  it('refuses an expired key with 401 saying it expired', async () => {
    const short = await call(a, 'POST', `/sub-accounts/${sub.id}/keys`, main, {
      name: 'trial',
      expires_at: unix() + 30,
    });
    expect(short.body.expires_at).toBe(unix() + 30);
    expect((await ask(b, short.body.key)).choices).toHaveLength(1);
    now += 30_000;
    const refused = await refusal(b, short.body.key);
    expect(refused.status).toBe(401);
    expect(refused.error).toMatchObject({ type: 'authentication_error' });
    expect(refused.error.message).toContain('Expired API key: it expired at');
  });

  it("spends every key under the sub-account's cap, and logs a refusal with its reason and the key's name", async () => {
    await call(a, 'PATCH', `/sub-accounts/${sub.id}`, main, { spend_cap_cents: 0 });
    const refused = await refusal(b, ci.key);
    expect(refused.status).toBe(402);
    expect(refused.error.type).toBe('budget_exceeded');
    const logged = await eventually(
      () => call(a, 'GET', `/requests?sub_account_id=${sub.id}&status=402`, main),
      (r) => r.body.data?.length === 1,
      3000,
    );
    expect(logged.body.data[0]).toMatchObject({
      status: 402,
      error_type: 'budget_exceeded',
      error_message: refused.error.message,
      key_id: ci.id,
      key_name: 'ci',
      cache_hit: false,
    });
  });

  it('refuses bad input naming the field, and keys of another owner as not found', async () => {
    const path = `/sub-accounts/${sub.id}/keys`;
    const past = await call(a, 'POST', path, main, { name: 'old', expires_at: unix() - 1 });
    expect(past.status).toBe(400);
    expect(past.body.error).toMatchObject({ type: 'invalid_request_error', param: 'expires_at' });
    const unnamed = await call(a, 'POST', path, main, {});
    expect(unnamed.body.error).toMatchObject({ param: 'name', code: 400 });
    const grace = await call(a, 'POST', `${path}/${ci.id}/rotate`, main, { grace_seconds: -1 });
    expect(grace.body.error).toMatchObject({ param: 'grace_seconds', code: 400 });
    const mainKeys = await call(a, 'GET', '/keys', main);
    const mainKeyId = mainKeys.body.data[0].id;
    expect((await call(a, 'DELETE', `${path}/${mainKeyId}`, main)).status).toBe(404);
    expect((await call(a, 'DELETE', `/keys/${ci.id}`, main)).status).toBe(404);
    expect((await call(a, 'GET', '/sub-accounts/sa_000000000000000000000000/keys', main)).status).toBe(404);
    // A sub-account's key manages no keys, its own sub-account's included.
    expect((await call(a, 'GET', path, ci.key)).body.error).toMatchObject({
      type: 'permission_error',
      code: 403,
    });
    expect((await call(a, 'POST', '/keys', ci.key, { name: 'x' })).status).toBe(403);
  });
});

describe("the account's own keys under /v1/keys", () => {
  it('creates, lists, rotates and revokes main keys, on every instance', async () => {
    const created = await call(a, 'POST', '/keys', main, { name: 'backend', expires_at: unix() + 3600 });
    expect(created.body).toMatchObject({ name: 'backend', sub_account_id: null, expires_at: unix() + 3600 });
    const backend = created.body.key as string;
    expect((await ask(b, backend)).choices).toHaveLength(1);
    const listed = await eventually(
      () => call(a, 'GET', '/keys', main),
      (r) => r.body.data?.some((k: Json) => k.name === 'backend' && k.last_used_at !== null),
      3000,
    );
    expect(listed.body.data.map((k: Json) => k.name)).toEqual(['default', 'backend']);

    // Rotated with no grace: the old key stops at once; the new one keeps the name and the expiry.
    const rotated = await call(a, 'POST', `/keys/${created.body.id}/rotate`, main, {});
    expect(rotated.body).toMatchObject({ name: 'backend', expires_at: unix() + 3600 });
    expect((await refusal(b, backend)).status).toBe(401);
    expect((await ask(b, rotated.body.key)).choices).toHaveLength(1);

    expect((await call(a, 'DELETE', `/keys/${rotated.body.id}`, main)).status).toBe(200);
    expect(await refusal(b, rotated.body.key)).toMatchObject({ status: 401 });
    expect((await call(a, 'GET', '/keys', main)).body.data.map((k: Json) => k.name)).toEqual(['default']);
  });
});
