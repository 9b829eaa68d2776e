import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

// One DELETE /v1/cache used to turn `gateway audit` (and the operator dashboard's audit, the same run) red for good:
// the audit's schema check knew no `cache-` streams.

let gateway: TestGateway;
let key: string;

async function chat(secret: string, content: string): Promise<void> {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'local/echo', cache: 'auto', messages: [{ role: 'user', content }] }),
  });
  expect(response.status).toBe(200);
  await response.body?.cancel();
}

async function purge(secret: string): Promise<void> {
  const response = await fetch(`${gateway.url}/v1/cache`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${secret}` },
  });
  expect(response.status).toBe(200);
  expect(await json(response)).toMatchObject({ object: 'cache.purge' });
}

/** The operator's session, as the sign-in form gives it. */
async function operatorCookie(): Promise<string> {
  const form = await fetch(`${gateway.url}/dashboard/sign-in?as=operator`);
  const nonce = (form.headers.get('set-cookie') ?? '').split(';')[0] as string;
  const token = /name="_token" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
  const signedIn = await fetch(`${gateway.url}/dashboard/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: nonce, accept: 'text/html' },
    body: new URLSearchParams({ _token: token, key: gateway.adminToken }).toString(),
  });
  expect(signedIn.headers.get('location')).toBe('/dashboard/admin');
  return (signedIn.headers.getSetCookie().find((c) => c.startsWith('gw_session=')) ?? '').split(
    ';',
  )[0] as string;
}

const auditResult = (page: string) => /id="audit-result">(\w+)</.exec(page)?.[1];

beforeAll(async () => {
  gateway = await startTestGateway();
  const account = await json(await gateway.admin('/accounts', { name: 'Purger' }));
  key = account.key;
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 500, reference: 'p' });
});
afterAll(async () => {
  await gateway?.close();
});

describe('the audit after a cache purge', () => {
  it('passes from the CLI and on the operator dashboard', async () => {
    const sub = await json(
      await fetch(`${gateway.url}/v1/sub-accounts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Customer', spend_cap_cents: 100 }),
      }),
    );
    await chat(key, 'remember me');
    await chat(sub.key, 'remember me too');
    await purge(sub.key);
    await purge(key);

    const audit = await runCli(['audit'], gateway.env);
    expect(audit.stdout).toMatch(/^PASS +schemas +\d+ of \d+ events valid, each in its own stream$/m);
    expect(audit.stdout).toContain('Result: PASS');
    expect(audit.code).toBe(0);

    // The page shows the latest report (the CLI's), then its own run's.
    const cookie = await operatorCookie();
    const page = async () => (await fetch(`${gateway.url}/dashboard/admin`, { headers: { cookie } })).text();
    const before = await page();
    expect(auditResult(before)).toBe('PASS');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(before)?.[1] ?? '';
    const run = await fetch(`${gateway.url}/dashboard/admin/audit`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf }).toString(),
    });
    expect(run.status).toBe(303);
    const after = await page();
    expect(auditResult(after)).toBe('PASS');
    expect(after).toMatch(/PASS +schemas /);
  });
});
