import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { monthOf } from '../../events/budget.ts';
import { chat, say } from '../support/chat.ts';
import { runCli } from '../support/cli.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Json, json } from '../support/json.ts';

// Tag budgets listed and removed: GET /v1/budgets and DELETE /v1/budgets/{tag}, main keys only.

let gateway: TestGateway;
let accountId: string;
let key: string;
let subKey: string;

const v1 = (method: string, path: string, as: string, body?: unknown) =>
  fetch(`${gateway.url}/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${as}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

beforeAll(async () => {
  gateway = await startTestGateway();
  const account = await json(await gateway.admin('/accounts', { name: 'budgeted' }));
  ({ account_id: accountId, key } = account);
  await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 100, reference: 'p' });
  subKey = (await json(await v1('POST', '/sub-accounts', key, { name: 'customer', spend_cap_cents: 10 })))
    .key;
});
afterAll(async () => {
  await gateway?.close();
});

it('lists each tag budget with its cap and what the tag spent this month', async () => {
  expect((await v1('POST', '/budgets', key, { tag: 'zeta', cap_cents: 100 })).status).toBe(200);
  expect((await v1('POST', '/budgets', key, { tag: 'alpha', cap_cents: 0 })).status).toBe(200);
  expect((await chat(gateway.url, key, say('hi'), { 'x-gw-tag': 'zeta' })).status).toBe(200);
  const month = monthOf(new Date());
  const listed = await eventually(
    async () => json(await v1('GET', '/budgets', key)),
    (body: Json) => body.data[1]?.spent_cents > 0,
    3000,
  );
  expect(listed).toEqual({
    object: 'list',
    data: [
      { object: 'budget', tag: 'alpha', cap_cents: 0, month, spent_cents: 0 },
      { object: 'budget', tag: 'zeta', cap_cents: 100, month, spent_cents: expect.any(Number) },
    ],
  });
});

it('removes a budget as an event: the tag is uncapped from the next request', async () => {
  const capped = await chat(gateway.url, key, say('hi'), { 'x-gw-tag': 'alpha' });
  expect(capped.status).toBe(402);
  expect(capped.body.error.type).toBe('budget_exceeded');
  const removed = await v1('DELETE', '/budgets/alpha', key);
  expect(removed.status).toBe(200);
  expect(await json(removed)).toEqual({ object: 'budget', tag: 'alpha', deleted: true });
  expect((await chat(gateway.url, key, say('hi'), { 'x-gw-tag': 'alpha' })).status).toBe(200);
  const listed = await json(await v1('GET', '/budgets', key));
  expect(listed.data.map((b: Json) => b.tag)).toEqual(['zeta']);
  const events = await gateway.runtime.store.readStream(`account-${accountId}`);
  expect(events.filter((e) => e.type === 'TagBudgetRemoved').map((e) => e.data)).toEqual([
    { accountId, tag: 'alpha' },
  ]);

  const again = await v1('DELETE', '/budgets/alpha', key);
  expect(again.status).toBe(404);
  expect((await json(again)).error).toMatchObject({ type: 'not_found_error', param: 'tag' });
  const badTag = await v1('DELETE', '/budgets/caf%C3%A9', key);
  expect(badTag.status).toBe(400);
  expect((await json(badTag)).error.param).toBe('tag');
});

it('is for main keys only', async () => {
  for (const [method, path] of [
    ['GET', '/budgets'],
    ['DELETE', '/budgets/zeta'],
  ] as const) {
    const response = await v1(method, path, subKey);
    expect(response.status).toBe(403);
    expect((await json(response)).error.type).toBe('permission_error');
  }
});

it('lists the budgets to an MCP client of a main key', async () => {
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  try {
    const result = await client.callTool({ name: 'list_budgets', arguments: {} });
    expect(result.structuredContent).toEqual(await json(await v1('GET', '/budgets', key)));
  } finally {
    await client.close();
  }
});

it('passes the audit after a removal, the caps replayed without the removed budget', async () => {
  const audit = await runCli(['audit', '--account', accountId], gateway.env);
  expect(audit.code, audit.stdout).toBe(0);
  for (const check of ['caps', 'read models'])
    expect(audit.stdout).toMatch(new RegExp(`^PASS +${check} `, 'm'));
});
