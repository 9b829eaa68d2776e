import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { api, openAccount, type Receiver, startReceiver, until } from './support.ts';

let gateway: TestGateway;
let receiver: Receiver;

beforeAll(async () => {
  gateway = await startTestGateway(
    { GATEWAY_ALLOW_PRIVATE_URLS: 'true' },
    { workerIntervalsMs: { webhooks: 20 } },
  );
  receiver = await startReceiver();
});
afterAll(async () => {
  await gateway?.close();
  await receiver?.close();
});

describe.each([
  ['through the running gateway', () => gateway.env],
  // Nothing listens at port 9: the CLI works on the store, and the gateway's projection sees the event.
  ['on the store directly', () => ({ ...gateway.env, GATEWAY_URL: 'http://127.0.0.1:9' })],
])('webhooks CLI %s', (_, env) => {
  it('sets the account endpoint that lifecycle events go to, shows it, and refuses a bad URL', async () => {
    const account = await openAccount(gateway.url, gateway.adminToken);
    const set = await runCli(
      ['webhooks', 'set', '--account', account.account_id, '--url', receiver.url],
      env(),
    );
    expect(set.code).toBe(0);
    expect(set.json).toEqual({ account_id: account.account_id, url: receiver.url });

    await until(
      async () => (await runCli(['webhooks', 'show', '--account', account.account_id], env())).json,
      (shown) => (shown as { url: string | null }).url === receiver.url,
      20_000,
    );
    const rotated = await until(
      () => api(gateway, account.key, '/webhook-secret/rotate', { method: 'POST' }),
      (r) => r.status === 200,
    );
    const notice = await until(
      () =>
        receiver.received.find(
          (r) => r.headers['x-gw-event-type'] === 'key.rotated' && r.body.includes(account.key_id),
        ),
      (found) => found !== undefined,
    );
    expect(JSON.parse(notice?.body ?? '{}').data).toEqual({
      account_id: account.account_id,
      key_id: rotated.body.key_id,
      sub_account_id: null,
    });
    const shown = await until(
      async () => (await runCli(['webhooks', 'show', '--account', account.account_id], env())).json,
      (s) => (s as { deliveries: { status: string }[] }).deliveries[0]?.status === 'delivered',
      20_000,
    );
    expect(shown).toMatchObject({
      account_id: account.account_id,
      url: receiver.url,
      deliveries: [{ type: 'key.rotated', status: 'delivered', attempts: 1, last_status: 200 }],
    });

    const bad = await runCli(
      ['webhooks', 'set', '--account', account.account_id, '--url', 'ftp://x.test/'],
      env(),
    );
    expect(bad.code).toBe(1);
    expect(bad.json).toMatchObject({
      error: { code: 400, message: expect.stringMatching(/^'url': only http/) },
    });
    const missing = await runCli(['webhooks', 'set', '--account', 'acct_nope', '--url', receiver.url], env());
    expect(missing.code).toBe(1);
    expect(missing.json).toMatchObject({ error: { code: 404 } });

    const cleared = await runCli(['webhooks', 'clear', '--account', account.account_id], env());
    expect(cleared.json).toEqual({ account_id: account.account_id, url: null });
  });
});
