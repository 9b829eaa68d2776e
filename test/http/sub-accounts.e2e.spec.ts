import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, say } from '../support/chat.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

let gateway: TestGateway;
let main: string;
let accountId: string;

const call = (method: string, path: string, key: string, body?: unknown) =>
  fetch(`${gateway.url}/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

beforeAll(async () => {
  gateway = await startTestGateway();
  ({ account_id: accountId, key: main } = await json(await gateway.admin('/accounts', { name: 'reseller' })));
});
afterAll(async () => {
  await gateway?.close();
});

describe('sub-accounts', () => {
  it('refuses creation with 402 topup_required until the account was topped up once', async () => {
    const response = await call('POST', '/sub-accounts', main, { name: 'early', spend_cap_cents: 100 });
    expect(response.status).toBe(402);
    expect((await json(response)).error).toMatchObject({ type: 'topup_required', code: 402 });
    await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 5000, reference: 'first' });
  });

  it('creates a scoped key shown once, with the rate limit capped at the account’s own', async () => {
    const created = await json(
      await call('POST', '/sub-accounts', main, {
        name: 'Customer One',
        spend_cap_cents: 250,
        external_ref: 'crm-1',
        rate_limit_rpm: 1_000_000,
        default_tag: 'customer-one',
      }),
    );
    expect(created).toMatchObject({
      id: expect.stringMatching(/^sa_/),
      object: 'sub_account',
      name: 'Customer One',
      external_ref: 'crm-1',
      spend_cap_cents: 250,
      rate_limit_rpm: 600,
      default_tag: 'customer-one',
      spent_cents: 0,
      key: expect.stringMatching(/^sk-gw-/),
    });
    const fetched = await json(await call('GET', `/sub-accounts/${created.id}`, main));
    expect(fetched.key).toBeUndefined();
    const list = await json(await call('GET', '/sub-accounts', main));
    expect(list.data.map((s: { id: string }) => s.id)).toContain(created.id);
  });

  it('bills a sub-account key to its cap and default tag, and shows it only its own usage', async () => {
    const sub = await json(
      await call('POST', '/sub-accounts', main, { name: 'Two', spend_cap_cents: 100, default_tag: 'two' }),
    );
    const served = await chat(gateway.url, sub.key, say('hello from a customer'));
    expect(served.status).toBe(200);
    const tagged = await chat(gateway.url, sub.key, say('tagged'), { 'x-gw-tag': 'explicit' });
    expect(tagged.status).toBe(200);
    await chat(gateway.url, main, say('the reseller itself'), { 'x-gw-tag': 'internal' });

    const own = await eventually(
      async () => json(await call('GET', '/usage/by-tag', sub.key)),
      (u) => u.data.length === 2,
      3000,
    );
    expect(own.data.map((r: { tag: string }) => r.tag).sort()).toEqual(['explicit', 'two']);
    const all = await eventually(
      async () => json(await call('GET', '/usage/by-tag', main)),
      (u) => u.data.some((r: { tag: string }) => r.tag === 'internal'),
      3000,
    );
    // The account sees its customer's spending under the tag it gave it, whatever tag the customer sent.
    const tags = all.data.map((r: { tag: string }) => r.tag);
    expect(tags).toEqual(expect.arrayContaining(['internal', 'two']));
    expect(tags).not.toContain('explicit');
    const bySub = await json(await call('GET', '/usage/by-sub-account', sub.key));
    expect(bySub.data).toEqual([
      expect.objectContaining({ sub_account_id: sub.id, requests: 2, name: 'Two' }),
    ]);

    const usage = await json(await call('GET', `/sub-accounts/${sub.id}/usage`, main));
    expect(usage).toMatchObject({ sub_account_id: sub.id, requests: 2 });
    const charged = Number(served.headers.get('x-cost-cents')) + Number(tagged.headers.get('x-cost-cents'));
    expect(usage.cost_cents).toBeCloseTo(charged, 6);
    const balance = await json(await call('GET', '/balance', sub.key));
    expect(balance.cents).toBe(Math.floor(100 - charged));
  });

  it('keeps the reseller settings given, shows them, and refuses bad ones by name', async () => {
    const settings = {
      markup_percent: 30,
      price_overrides: [{ model: 'openai/*', markup_percent: 12.5 }],
      spend_cap_reset: 'monthly',
      rate_limit_tpm: 20_000,
      allowed_models: ['local/*', 'openai/gpt-4o-mini'],
    };
    const created = await json(
      await call('POST', '/sub-accounts', main, { name: 'Reseller', spend_cap_cents: 100, ...settings }),
    );
    expect(created).toMatchObject(settings);
    const plain = await json(
      await call('POST', '/sub-accounts', main, { name: 'Plain', spend_cap_cents: 1 }),
    );
    expect(plain).toMatchObject({
      markup_percent: 0,
      price_overrides: [],
      spend_cap_reset: null,
      rate_limit_tpm: null,
      allowed_models: null,
    });
    const patched = await json(
      await call('PATCH', `/sub-accounts/${created.id}`, main, {
        markup_percent: 0.25,
        allowed_models: null,
      }),
    );
    expect(patched).toMatchObject({ ...settings, markup_percent: 0.25, allowed_models: null });
    for (const [field, value] of [
      ['markup_percent', 12.345],
      ['markup_percent', 1001],
      ['spend_cap_reset', 'yearly'],
      ['allowed_models', ['openai/gpt 4o']],
    ] as const) {
      const refused = await call('PATCH', `/sub-accounts/${created.id}`, main, { [field]: value });
      expect(refused.status, field).toBe(400);
      expect((await json(refused)).error.message).toContain(field);
    }
  });

  it('keeps management endpoints closed to sub-account keys', async () => {
    const sub = await json(await call('POST', '/sub-accounts', main, { name: 'Three', spend_cap_cents: 1 }));
    for (const [method, path, body] of [
      ['POST', '/sub-accounts', { name: 'x', spend_cap_cents: 1 }],
      ['GET', '/sub-accounts', undefined],
      ['GET', `/sub-accounts/${sub.id}`, undefined],
      ['PATCH', `/sub-accounts/${sub.id}`, { spend_cap_cents: 1000 }],
      ['DELETE', `/sub-accounts/${sub.id}`, undefined],
      ['GET', `/sub-accounts/${sub.id}/usage`, undefined],
      ['POST', '/budgets', { tag: 'x', cap_cents: 1 }],
    ] as const) {
      const response = await call(method, path, sub.key, body);
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 403 });
      expect((await json(response)).error.type).toBe('permission_error');
    }
  });

  it('updates the record, refuses bad fields by name, and revokes the key at once on delete', async () => {
    const sub = await json(await call('POST', '/sub-accounts', main, { name: 'Four', spend_cap_cents: 10 }));
    const patched = await json(
      await call('PATCH', `/sub-accounts/${sub.id}`, main, {
        name: 'Four B',
        spend_cap_cents: 20,
        default_tag: null,
      }),
    );
    expect(patched).toMatchObject({ name: 'Four B', spend_cap_cents: 20, default_tag: null });
    const bad = await call('PATCH', `/sub-accounts/${sub.id}`, main, { spend_cap_cents: -5 });
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.message).toContain('spend_cap_cents');
    const missing = await call('POST', '/sub-accounts', main, { name: 'no cap' });
    expect((await json(missing)).error.message).toContain('spend_cap_cents');
    // A default tag, like a budget's, is one the x-gw-tag header could carry.
    for (const tag of ['tab\there', 'é😀']) {
      const odd = await call('PATCH', `/sub-accounts/${sub.id}`, main, { default_tag: tag });
      expect(odd.status).toBe(400);
      expect((await json(odd)).error.message).toContain('default_tag');
      const budget = await call('POST', '/budgets', main, { tag, cap_cents: 100 });
      expect(budget.status).toBe(400);
      expect((await json(budget)).error.message).toContain('tag');
    }

    expect((await call('GET', '/balance', sub.key)).status).toBe(200);
    const deleted = await json(await call('DELETE', `/sub-accounts/${sub.id}`, main));
    expect(deleted).toEqual({ id: sub.id, object: 'sub_account', deleted: true });
    expect((await call('GET', '/balance', sub.key)).status).toBe(401);
    expect((await call('GET', `/sub-accounts/${sub.id}`, main)).status).toBe(404);
  });

  it('refuses a request over the sub-account cap with 402 budget_exceeded stating cap and spent', async () => {
    const sub = await json(await call('POST', '/sub-accounts', main, { name: 'Tiny', spend_cap_cents: 0 }));
    const refused = await chat(gateway.url, sub.key, say('anything'));
    expect(refused.status).toBe(402);
    expect(refused.body.error).toMatchObject({ type: 'budget_exceeded', code: 402 });
    expect(refused.body.error.message).toContain('cap $0.00, spent $0.00');
  });
});
