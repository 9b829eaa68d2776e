import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestRefused } from '../../src/contracts/errors.ts';
import { describeError } from '../../src/http/errors.ts';
import { checkWebhookUrl } from '../../src/webhooks/url.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { openAccount, settledAttempt, sleep, startReceiver } from './support.ts';

/** A name other than `localhost` that /etc/hosts points at a loopback address, where the machine has one. */
function loopbackAlias(): string | undefined {
  try {
    for (const line of readFileSync('/etc/hosts', 'utf8').split('\n')) {
      const [address, ...names] = line.replace(/#.*/, '').trim().split(/\s+/);
      if (!address?.startsWith('127.')) continue;
      const alias = names.find((n) => n && !n.includes('localhost'));
      if (alias) return alias;
    }
  } catch {}
  return undefined;
}

async function refusal(url: string, env: NodeJS.ProcessEnv = {}): Promise<string | undefined> {
  try {
    await checkWebhookUrl(url, env);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(RequestRefused);
    expect(describeError(error).status).toBe(400);
    return (error as RequestRefused).message;
  }
}

describe('checkWebhookUrl', () => {
  it.each([
    ['ftp://hooks.example.com/in', /only http and https/],
    ['file:///etc/passwd', /only http and https/],
    ['not a url', /not an absolute URL/],
    ['https://user:pw@hooks.example.com/', /credentials/],
    ['http://127.0.0.1:8080/hooks', /private or reserved/],
    ['http://10.1.2.3/hooks', /private or reserved/],
    ['http://192.168.1.10/hooks', /private or reserved/],
    ['http://172.16.0.5/hooks', /private or reserved/],
    ['http://169.254.169.254/latest/meta-data/', /private or reserved/],
    ['http://[::1]:8080/', /private or reserved/],
    ['http://[fd00::1]/', /private or reserved/],
    ['http://[::ffff:127.0.0.1]/', /private or reserved/],
    ['http://0.0.0.0/', /private or reserved/],
    ['http://localhost:8080/hooks', /resolves to 127\.0\.0\.1|resolves to ::1/],
  ])('refuses %s, naming webhook_url', async (url, reason) => {
    const message = await refusal(url);
    expect(message).toMatch(/^'webhook_url': /);
    expect(message).toMatch(reason);
  });

  it('refuses a name that looks public but resolves to a loopback address', async (context) => {
    const alias = loopbackAlias();
    if (!alias) return context.skip();
    expect(await refusal(`http://${alias}:8080/hooks`)).toMatch(/^'webhook_url': .* resolves to 127\./);
  });

  it('accepts private addresses when the operator allows them, and returns the URL normalised', async () => {
    const env = { GATEWAY_ALLOW_PRIVATE_URLS: 'true' };
    expect(await checkWebhookUrl('http://127.0.0.1:8080/hooks', env)).toBe('http://127.0.0.1:8080/hooks');
    expect(await checkWebhookUrl('HTTP://LOCALHOST:8080', env)).toBe('http://localhost:8080/');
    expect(await refusal('ftp://127.0.0.1/', env)).toMatch(/only http and https/);
  });
});

describe('deliveries without GATEWAY_ALLOW_PRIVATE_URLS', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({}, { workerIntervalsMs: { webhooks: 20 } });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('refuses, at delivery time, a URL whose name resolves to a loopback address; nothing is sent', async () => {
    const receiver = await startReceiver();
    const account = await openAccount(gateway.url, gateway.adminToken);
    const source = 'job:job_ssrf';
    await gateway.runtime.webhooks.request({
      accountId: account.account_id,
      keyId: account.key_id,
      url: receiver.url.replace('127.0.0.1', 'localhost'),
      type: 'job.completed',
      data: {},
      source,
    });
    const row = await settledAttempt(gateway, source, 1);
    expect(row).toMatchObject({ status: 'pending', last_status: null });
    expect(row.last_error).toMatch(/^refused: localhost resolves to .*private or reserved/);
    expect(receiver.received).toHaveLength(0);
    await receiver.close();
  });

  it("refuses a private account endpoint, naming 'url'", async () => {
    const account = await openAccount(gateway.url, gateway.adminToken);
    const response = await gateway.admin(`/accounts/${account.account_id}/webhook-endpoint`, {
      url: 'http://169.254.169.254/latest/meta-data/',
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/^'url': /);
  });
});

describe('redirects', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway(
      { GATEWAY_ALLOW_PRIVATE_URLS: 'true' },
      { workerIntervalsMs: { webhooks: 20 } },
    );
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('are not followed: a 3xx is a failed attempt and its target receives nothing', async () => {
    const target = await startReceiver();
    const redirecting = await startReceiver(() => ({ status: 307, headers: { location: target.url } }));
    const account = await openAccount(gateway.url, gateway.adminToken);
    const source = 'job:job_redirect';
    await gateway.runtime.webhooks.request({
      accountId: account.account_id,
      keyId: account.key_id,
      url: redirecting.url,
      type: 'job.completed',
      data: {},
      source,
    });
    const row = await settledAttempt(gateway, source, 1);
    expect(row).toMatchObject({ status: 'pending', last_status: 307 });
    expect(row.last_error).toMatch(/redirects are not followed/);
    await sleep(100);
    expect(redirecting.received).toHaveLength(1);
    expect(target.received).toHaveLength(0);
    await target.close();
    await redirecting.close();
  });
});
