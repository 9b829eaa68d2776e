import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, say } from '../support/chat.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Json, json } from '../support/json.ts';

// A sub-account spends under the default tag its account gave it: a tag it sends is its own label, never a way
// out of that budget nor into a budget of its account's.

let gateway: TestGateway;
let main: string;

const call = (method: string, path: string, key: string, body?: unknown) =>
  fetch(`${gateway.url}/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const customer = async (name: string, defaultTag: string | null) =>
  json(await call('POST', '/sub-accounts', main, { name, spend_cap_cents: 1_000, default_tag: defaultTag }));

/** Usage by tag as `key` sees it, once every tag of `expectTags` shows. */
const usageByTag = async (key: string, ...expectTags: string[]): Promise<Json[]> =>
  (
    await eventually(
      async () => json(await call('GET', '/usage/by-tag', key)),
      (usage) => expectTags.every((tag) => usage.data.some((row: Json) => row.tag === tag)),
      5_000,
    )
  ).data;

beforeAll(async () => {
  gateway = await startTestGateway();
  const account = await json(await gateway.admin('/accounts', { name: 'reseller' }));
  main = account.key;
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'funding' });
});
afterAll(async () => {
  await gateway?.close();
});

describe('a sub-account and the tags it sends', () => {
  it('cannot escape its default tag’s budget with another tag, in a header or not', async () => {
    expect((await call('POST', '/budgets', main, { tag: 'frozen-customer', cap_cents: 0 })).status).toBe(200);
    const sub = await customer('frozen', 'frozen-customer');
    const plain = await chat(gateway.url, sub.key, say('hello'));
    expect(plain.status).toBe(402);
    expect(plain.body.error.message).toContain("tag 'frozen-customer'");
    for (const tag of ['anything-else', 'frozen-customer ', 'FROZEN-CUSTOMER']) {
      const escaped = await chat(gateway.url, sub.key, say('hello'), { 'x-gw-tag': tag });
      expect(escaped.status, tag).toBe(402);
      expect(escaped.body.error.message).toContain("tag 'frozen-customer'");
    }
  });

  it('cannot spend a budget of its account’s by naming its tag; its spending counts under its own tag', async () => {
    // One cent a month for the account's own campaign: enough for a few echoes, not for a customer's traffic.
    await call('POST', '/budgets', main, { tag: 'parent-campaign', cap_cents: 1 });
    const sub = await customer('borrower', 'borrower-customer');
    const request = { model: 'local/echo-pro', max_tokens: 200, ...say('spend '.repeat(200)) };
    let served = 0;
    for (let i = 0; i < 20; i++) {
      const response = await chat(gateway.url, sub.key, request, { 'x-gw-tag': 'parent-campaign' });
      expect(response.status).toBe(200);
      served++;
    }
    expect(served).toBe(20);
    // The account's own campaign still has its whole cent.
    // With a limit: the whole of local/echo's own (16,384 tokens) would cost more than the cent.
    const own = await chat(
      gateway.url,
      main,
      { max_tokens: 100, ...say('the campaign itself') },
      { 'x-gw-tag': 'parent-campaign' },
    );
    expect(own.status).toBe(200);
    const accountView = await usageByTag(main, 'borrower-customer', 'parent-campaign');
    const campaign = accountView.find((row) => row.tag === 'parent-campaign');
    expect(campaign?.requests).toBe(1);
    expect(accountView.find((row) => row.tag === 'borrower-customer')?.requests).toBe(20);
    const budget = await json(await call('POST', '/budgets', main, { tag: 'parent-campaign', cap_cents: 1 }));
    expect(budget.spent_cents).toBe(campaign?.cost_cents);
    // The customer's own view is by the tags it sent, for its analytics.
    const customerView = await usageByTag(sub.key, 'parent-campaign');
    expect(customerView).toEqual([expect.objectContaining({ tag: 'parent-campaign', requests: 20 })]);
  });

  it('spends under no tag budget when it has no default tag, whatever tag it sends', async () => {
    await call('POST', '/budgets', main, { tag: 'closed-campaign', cap_cents: 0 });
    const sub = await customer('untagged', null);
    const response = await chat(gateway.url, sub.key, say('not under that budget'), {
      'x-gw-tag': 'closed-campaign',
    });
    expect(response.status).toBe(200);
    // The account's own requests under that tag are refused as before.
    expect((await chat(gateway.url, main, say('x'), { 'x-gw-tag': 'closed-campaign' })).status).toBe(402);
    const logged = await eventually(
      async () => json(await call('GET', '/requests?tag=closed-campaign', sub.key)),
      (page) => page.data.length > 0,
      5_000,
    );
    // The request log keeps the tag the customer sent.
    expect(logged.data[0]).toMatchObject({ tag: 'closed-campaign', status: 200 });
  });

  it('counts its routed requests under its own tag for itself and under its default tag for its account', async () => {
    const sub = await customer('routed', 'routed-customer');
    const routed = await chat(
      gateway.url,
      sub.key,
      { ...say('pick for me'), model: 'auto' },
      { 'x-gw-tag': 'feature-x' },
    );
    expect(routed.status, JSON.stringify(routed.body)).toBe(200);
    // The routing read model follows the log beside the usage one: both rows once both have caught up.
    const rowOf = async (key: string, tag: string) =>
      (
        await eventually(
          async () => json(await call('GET', '/usage/by-tag', key)),
          (usage) => usage.data.some((row: Json) => row.tag === tag && row.routed_requests === 1),
          5_000,
        )
      ).data.find((row: Json) => row.tag === tag);
    expect(await rowOf(main, 'routed-customer')).toMatchObject({ requests: 1, routed_requests: 1 });
    expect(await rowOf(sub.key, 'feature-x')).toMatchObject({ requests: 1, routed_requests: 1 });
  });
});
