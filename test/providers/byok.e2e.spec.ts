import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetStream, monthOf } from '../../events/budget.ts';
import { START } from '../../events/store.ts';
import { nanosToCents } from '../../src/contracts/money.ts';
import { runCli } from '../support/cli.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { logicalStream } from '../support/logical-events.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

const OPERATOR_KEY = 'sk-operator-pool';
const OWN_KEY = 'sk-own-account-secret-7Qz9';
const FIRST = randomBytes(32).toString('base64');
const SECOND = randomBytes(32).toString('base64');

let openai: Upstream;
let gateway: TestGateway;
let accountId: string;
let mainKey: string;
let client: OpenAI;

const v1 = (key: string, method: string, path: string, body?: unknown, url = gateway.url) =>
  fetch(`${url}/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

beforeAll(async () => {
  openai = await startOpenAiUpstream();
  gateway = await startTestGateway({
    OPENAI_BASE_URL: `${openai.url}/v1`,
    OPENAI_API_KEY: OPERATOR_KEY,
    GATEWAY_SECRETS_KEY: FIRST,
  });
  const account = await json(await gateway.admin('/accounts', { name: 'byok' }));
  accountId = account.account_id;
  mainKey = account.key;
  await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 10_000, reference: 'funding' });
  client = new OpenAI({ apiKey: mainKey, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.close();
  await openai?.close();
});

const ask = (on = client) =>
  on.chat.completions
    .create({ model: 'openai/gpt-4o-mini', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] })
    .withResponse();
/** The bearer key the simulator saw on its latest call. */
const lastKey = () => openai.requests.at(-1)?.headers.authorization?.replace(/^Bearer\s+/i, '');
async function lastCharge() {
  const events = await logicalStream(gateway.runtime.store, budgetStream(accountId, monthOf(new Date())));
  const settled = events.filter((e) => e.type === 'SpendSettled').at(-1);
  return settled?.data as { chargedNanos: string; charge: Record<string, unknown> };
}

describe('bring your own key', () => {
  let keyId: string;

  it('refuses a provider it does not know, an empty key or name, naming the field', async () => {
    const unknown = await v1(mainKey, 'POST', '/provider-keys', {
      provider: 'nope',
      api_key: 'x',
      name: 'a',
    });
    expect(unknown.status).toBe(400);
    expect((await json(unknown)).error.message).toMatch(/'provider'.*nope/);
    const empty = await v1(mainKey, 'POST', '/provider-keys', {
      provider: 'openai',
      api_key: ' ',
      name: 'a',
    });
    expect(empty.status).toBe(400);
    expect(JSON.stringify(await json(empty))).toContain('api_key');
    const noName = await v1(mainKey, 'POST', '/provider-keys', {
      provider: 'openai',
      api_key: 'k',
      name: '',
    });
    expect(noName.status).toBe(400);
    expect(JSON.stringify(await json(noName))).toContain('name');
  });

  it('registers a key and answers without its secret, then and in the listing', async () => {
    const created = await v1(mainKey, 'POST', '/provider-keys', {
      provider: 'openai',
      api_key: OWN_KEY,
      name: 'mine',
    });
    expect(created.status).toBe(200);
    const text = await created.text();
    expect(text).not.toContain(OWN_KEY);
    const body = JSON.parse(text);
    // Every field of the documented shape, and no other (the answer is serialized through its response schema).
    expect(body).toEqual({
      object: 'provider_key',
      id: expect.stringMatching(/^pk_/),
      provider: 'openai',
      name: 'mine',
      last4: '7Qz9',
      sub_account_id: null,
      created_at: expect.any(Number),
    });
    keyId = body.id;
    const listed = await (await v1(mainKey, 'GET', '/provider-keys')).text();
    expect(listed).not.toContain(OWN_KEY);
    expect(JSON.parse(listed)).toEqual({ object: 'list', data: [body] });

    // A short key shows no more than a quarter of itself, as an operator's credential does.
    const short = await json(
      await v1(mainKey, 'POST', '/provider-keys', {
        provider: 'mistral',
        api_key: 'sk-short',
        name: 'short',
      }),
    );
    expect(short.last4).toBe('rt');
    expect((await v1(mainKey, 'DELETE', `/provider-keys/${short.id}`)).status).toBe(200);
  });

  it("sends the account's requests with its own key and charges only the fee", async () => {
    const { response } = await ask();
    expect(lastKey()).toBe(OWN_KEY);
    const settled = await lastCharge();
    expect(settled.charge).toMatchObject({ discount: 'byok', credential: 'byok:mine' });
    const fee = BigInt(settled.charge.feeNanos as string);
    expect(BigInt(settled.charge.passThroughNanos as string)).toBeGreaterThan(fee);
    expect(BigInt(settled.chargedNanos)).toBe(fee);
    expect(Number(response.headers.get('x-cost-cents'))).toBe(nanosToCents(fee));
  });

  it('charges a cache hit of an own-key request the fee alone too, never more than asking the provider', async () => {
    const asked = () =>
      client.chat.completions
        .create({
          model: 'openai/gpt-4o-mini',
          max_tokens: 20,
          temperature: 0,
          messages: [{ role: 'user', content: 'a repeatable question' }],
        })
        .withResponse();
    const miss = await asked();
    expect(miss.response.headers.get('x-cache-status')).toBe('miss');
    const missCharge = await lastCharge();
    // The entry is stored just after the answer: ask again until the cache has it.
    let hit = await asked();
    const isHit = (r: typeof hit) => r.response.headers.get('x-cache-status')?.startsWith('hit') === true;
    for (let tries = 0; !isHit(hit) && tries < 20; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      hit = await asked();
    }
    expect(isHit(hit)).toBe(true);
    const hitCharge = await lastCharge();
    expect(hitCharge.charge).toMatchObject({ discount: 'byok' });
    expect(BigInt(hitCharge.chargedNanos)).toBe(BigInt(missCharge.chargedNanos));
  });

  it('answers with the provider refusing the own key when the account allows no fallback', async () => {
    openai.scriptKey?.(OWN_KEY, { kind: 'error', status: 401 });
    const before = openai.requests.length;
    await expect(ask()).rejects.toMatchObject({ status: 400 });
    expect(openai.requests.slice(before).map((r) => r.headers.authorization)).toEqual([`Bearer ${OWN_KEY}`]);
  });

  it("falls back to the operator's pool, charged in full, once the account allows it", async () => {
    await gateway.admin(`/accounts/${accountId}/settings`, { byok_fallback: true });
    await ask();
    expect(lastKey()).toBe(OPERATOR_KEY);
    const settled = await lastCharge();
    expect(settled.charge).toMatchObject({ discount: 'none', credential: 'default' });
    openai.scriptKey?.(OWN_KEY, undefined);
  });

  it('refuses a sub-account until its account lets sub-accounts bring keys', async () => {
    const sub = await json(
      await v1(mainKey, 'POST', '/sub-accounts', { name: 'customer', spend_cap_cents: 500 }),
    );
    const register = () =>
      v1(sub.key, 'POST', '/provider-keys', {
        provider: 'openai',
        api_key: 'sk-sub-secret-0001',
        name: 'theirs',
      });
    const refused = await register();
    expect(refused.status).toBe(403);
    expect((await json(refused)).error.type).toBe('permission_error');
    await gateway.admin(`/accounts/${accountId}/settings`, { byok_sub_accounts: true });
    const registered = await register();
    expect(registered.status).toBe(200);
    expect(await json(registered)).toMatchObject({ name: 'theirs', sub_account_id: sub.id });
    await ask(new OpenAI({ apiKey: sub.key, baseURL: `${gateway.url}/v1`, maxRetries: 0 }));
    expect(lastKey()).toBe('sk-sub-secret-0001');
  });

  it('keeps every secret out of the log, the request log and the export, and the audit holds', async () => {
    const all = await gateway.runtime.store.readAll(START, { maxCount: 100_000 });
    const log = JSON.stringify(all.map((e) => e.data));
    expect(log).toContain('byok:mine');
    expect(log).not.toContain(OWN_KEY);
    expect(log).not.toContain('sk-sub-secret-0001');
    expect(all.map((e) => e.type)).toContain('ProviderKeyRegistered');
    const requests = await (await v1(mainKey, 'GET', '/requests')).text();
    expect(requests).not.toContain(OWN_KEY);
    const exported = await runCli(
      ['export', '--account', accountId, '--month', monthOf(new Date())],
      gateway.env,
    );
    expect(exported.code).toBe(0);
    expect(exported.stdout).not.toContain(OWN_KEY);
    const audit = await runCli(['audit'], gateway.env);
    expect(audit.stdout).toContain('pricing');
    expect(audit.code, audit.stdout).toBe(0);
  });

  it('re-encrypts under a new secrets key, and the key still serves there', async () => {
    const rotated = await runCli(['provider-keys', 'reencrypt'], {
      ...gateway.env,
      GATEWAY_SECRETS_KEY: SECOND,
      GATEWAY_SECRETS_KEY_PREVIOUS: FIRST,
    });
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.json).toMatchObject({ reencrypted: 2, unreadable: 0 });
    // A second instance over the same store that knows only the new key.
    const second = await startTestGateway(
      { OPENAI_BASE_URL: `${openai.url}/v1`, OPENAI_API_KEY: OPERATOR_KEY, GATEWAY_SECRETS_KEY: SECOND },
      { schema: gateway.env.GATEWAY_DB_SCHEMA },
    );
    try {
      await ask(new OpenAI({ apiKey: mainKey, baseURL: `${second.url}/v1`, maxRetries: 0 }));
      expect(lastKey()).toBe(OWN_KEY);
    } finally {
      await second.close();
    }
  });

  it("goes back to the operator's pool once the key is removed", async () => {
    const removed = await v1(mainKey, 'DELETE', `/provider-keys/${keyId}`);
    expect(await json(removed)).toEqual({ object: 'provider_key', id: keyId, deleted: true });
    expect((await v1(mainKey, 'DELETE', `/provider-keys/${keyId}`)).status).toBe(404);
    await ask();
    expect(lastKey()).toBe(OPERATOR_KEY);
    expect(JSON.parse(await (await v1(mainKey, 'GET', '/provider-keys')).text()).data).toEqual([]);
  });

  it('refuses to register without GATEWAY_SECRETS_KEY, naming the setting', async () => {
    const bare = await startTestGateway({}, { schema: gateway.env.GATEWAY_DB_SCHEMA });
    try {
      const refused = await v1(
        mainKey,
        'POST',
        '/provider-keys',
        { provider: 'openai', api_key: 'k', name: 'x' },
        bare.url,
      );
      expect(refused.status).toBe(403);
      expect((await json(refused)).error.message).toContain('GATEWAY_SECRETS_KEY');
    } finally {
      await bare.close();
    }
  });
});
