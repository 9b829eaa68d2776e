import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Json, json } from '../support/json.ts';

/**
 * A client's `X-Request-Id` is its correlation id: echoed, kept beside the request and searchable, but never the
 * request's id, so it can neither collide with nor stand for one the gateway made (issue 30, item 3).
 */
let gateway: TestGateway;
let key: string;

const chat = (headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'local/echo', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
  });
const get = async (path: string) =>
  json(await fetch(`${gateway.url}/v1${path}`, { headers: { authorization: `Bearer ${key}` } }));
const logged = (id: string) =>
  eventually(
    () => get(`/requests/${encodeURIComponent(id)}`),
    (r) => r.id !== undefined,
    10_000,
  );

beforeAll(async () => {
  gateway = await startTestGateway();
  const account = await json(await gateway.admin('/accounts', { name: 'correlated' }));
  key = account.key;
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 100, reference: 'p' });
});
afterAll(async () => {
  await gateway?.close();
});

describe("a client's X-Request-Id", () => {
  it('is echoed and searchable, and one equal to an id the gateway made is confused with nothing', async () => {
    const first = await chat();
    expect(first.status).toBe(200);
    const firstId = first.headers.get('x-gw-request-id') as string;
    expect(first.headers.get('x-request-id')).toBe(firstId);

    // A second request sent with the first one's id as its own.
    const second = await chat({ 'x-request-id': firstId });
    expect(second.status).toBe(200);
    expect(second.headers.get('x-request-id')).toBe(firstId);
    const secondId = second.headers.get('x-gw-request-id') as string;
    expect(secondId).toMatch(/^[0-9a-f-]{36}$/);
    expect(secondId).not.toBe(firstId);

    // The gateway's id names its own request; the client's id finds the client's request, and only that one.
    expect(await logged(firstId)).toMatchObject({ id: firstId, client_request_id: null });
    expect(await logged(secondId)).toMatchObject({ id: secondId, client_request_id: firstId });
    const listed = await eventually(
      () => get(`/requests?client_request_id=${encodeURIComponent(firstId)}`),
      (l) => l.data?.length > 0,
      10_000,
    );
    expect(listed.data.map((r: Json) => [r.id, r.client_request_id])).toEqual([[secondId, firstId]]);

    // Each holds and is charged under its own id.
    const first$ = await logged(firstId);
    const second$ = await logged(secondId);
    expect(first$.hold_id).not.toBe(second$.hold_id);
    const { rows } = await gateway.runtime.database.pool.query<{ request_id: string; hold_id: string }>(
      `SELECT data->>'requestId' AS request_id, data->>'holdId' AS hold_id FROM events WHERE type = 'SpendSettled'
       AND data->>'holdId' = ANY($1)`,
      [[first$.hold_id, second$.hold_id]],
    );
    expect(Object.fromEntries(rows.map((r) => [r.hold_id, r.request_id]))).toEqual({
      [first$.hold_id]: firstId,
      [second$.hold_id]: secondId,
    });
  });

  it('finds the request it was sent with, over HTTP and from the CLI, when no request of the gateway has that id', async () => {
    const sent = await chat({ 'x-request-id': 'trace 42/abc' });
    expect(sent.headers.get('x-request-id')).toBe('trace 42/abc');
    const own = sent.headers.get('x-gw-request-id');
    expect(await logged('trace 42/abc')).toMatchObject({ id: own, client_request_id: 'trace 42/abc' });
    const shown = await runCli(['requests', 'show', 'trace 42/abc'], gateway.env);
    expect(shown.json).toMatchObject({ id: own, client_request_id: 'trace 42/abc' });
  });

  it('is not kept when it is no printable id: the echo is then the gateway’s own', async () => {
    const sent = await chat({ 'x-request-id': 'y'.repeat(201) });
    const own = sent.headers.get('x-gw-request-id');
    expect(sent.headers.get('x-request-id')).toBe(own);
    expect(await logged(own as string)).toMatchObject({ id: own, client_request_id: null });
  });
});
