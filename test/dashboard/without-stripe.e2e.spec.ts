import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAudit } from '../../src/audit/audit.ts';
import { chat, say } from '../support/chat.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

// Without Stripe configured: the billing page says how to configure it, the webhook route is absent, and the
// operator's top-ups still work. Plain HTTP, as a browser would send it (the browser test covers the pages).

let gateway: TestGateway;
let accountId: string;
let key: string;

/** Signs in as a form post does: the sign-in page's cookie and token, then the key. */
async function signIn(secret: string): Promise<string> {
  const form = await fetch(`${gateway.url}/dashboard/sign-in`);
  const nonce = (form.headers.get('set-cookie') ?? '').split(';')[0] as string;
  const token = /name="_token" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
  const signedIn = await fetch(`${gateway.url}/dashboard/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: nonce, accept: 'text/html' },
    body: new URLSearchParams({ _token: token, key: secret }).toString(),
  });
  expect(signedIn.status).toBe(303);
  return (signedIn.headers.getSetCookie().find((c) => c.startsWith('gw_session=')) ?? '').split(
    ';',
  )[0] as string;
}

beforeAll(async () => {
  gateway = await startTestGateway();
  ({ account_id: accountId, key } = await json(await gateway.admin('/accounts', { name: 'No card' })));
});
afterAll(async () => {
  await gateway?.close();
});

describe('the dashboard without Stripe', () => {
  it('says how to configure card top-ups, and the operator CLI route still credits', async () => {
    const cookie = await signIn(key);
    const page = await (await fetch(`${gateway.url}/dashboard/billing`, { headers: { cookie } })).text();
    expect(page).toContain('id="stripe-not-configured"');
    expect(page).toContain('STRIPE_SECRET_KEY');
    expect(page).not.toContain('name="amount"');
    const webhook = await fetch(`${gateway.url}/webhooks/stripe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      body: '{}',
    });
    expect(webhook.status).toBe(404);
    expect((await json(webhook)).error.message).toContain('not configured');
    const credited = await json(
      await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 100, reference: 'cli' }),
    );
    expect(credited.credited).toBe(true);
  });

  it('refuses a session cookie that was not signed by this gateway', async () => {
    const forged = await fetch(`${gateway.url}/dashboard/billing`, {
      redirect: 'manual',
      headers: { cookie: 'gw_session=eyJraW5kIjoiYWRtaW4ifQ.AAAA', accept: 'text/html' },
    });
    expect(forged.status).toBe(303);
    expect(forged.headers.get('location')).toBe('/dashboard/sign-in');
  });
});

describe('a refund of money already spent', () => {
  it('is recorded whole, and the audit says the account spent more than it has left', async () => {
    const served = await chat(gateway.url, key, {
      ...say('spend a little'),
      model: 'local/echo-pro',
      max_tokens: 64,
    });
    expect(served.status).toBe(200);
    const { reversed_cents } = await gateway.runtime.accounts.reverseTopUp(accountId, 'cli', 100, 'ch_test');
    expect(reversed_cents).toBe(100);
    const balance = await eventually(
      async () =>
        (
          await json(
            await fetch(`${gateway.url}/v1/balance`, { headers: { authorization: `Bearer ${key}` } }),
          )
        ).cents,
      (cents: number) => cents < 0,
      5000,
    );
    expect(balance).toBeLessThan(0);
    const audit = await runAudit(gateway.runtime.database.pool, gateway.runtime.store, { accountId });
    expect(audit.report).toMatch(
      /WARN +caps[\s\S]*reversal of top-up cli \(\$1\.0+\) leaves account acct_\w+ at -\$0\.\d+, below what it had already spent/,
    );
    expect(audit.report).toMatch(/PASS +balances /);
    const cookie = await signIn(key);
    const overview = await (await fetch(`${gateway.url}/dashboard`, { headers: { cookie } })).text();
    expect(overview).toContain('The balance is exhausted');
    // The audit above ran outside the dashboard (as the CLI's does): the operator's page shows its report.
    const operator = await signIn(gateway.adminToken);
    const admin = await (
      await fetch(`${gateway.url}/dashboard/admin`, { headers: { cookie: operator } })
    ).text();
    expect(admin).toContain(`Latest report (account ${accountId})`);
    expect(admin).toContain('below what it had already spent');
  });

  it('shows another month on the usage page, and refuses a month that is not one', async () => {
    const cookie = await signIn(key);
    const october = await fetch(`${gateway.url}/dashboard/usage?month=2020-10`, { headers: { cookie } });
    expect(await october.text()).toContain('No charges in 2020-10.');
    const bad = await fetch(`${gateway.url}/dashboard/usage?month=2020-13`, { headers: { cookie } });
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.message).toBe("'month': a month as YYYY-MM");
  });
});
