import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountStream } from '../../events/account.ts';
import { toNewEvent } from '../../events/index.ts';
import { reconciliationStream } from '../../events/reconciliation.ts';
import { chat, say } from '../support/chat.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { type StripeSimulator, startStripeSimulator } from '../upstreams/stripe.ts';

// One browser, one gateway, one simulated Stripe: the pages as an account holder, a sub-account and the operator
// see them. Screenshots of every page go to test-results/dashboard/ (docs/dashboard/ keeps copies).

const SHOTS = join(process.cwd(), 'test-results', 'dashboard');
const WEBHOOK_SECRET = 'whsec_test_dashboard';

let gateway: TestGateway;
let stripe: StripeSimulator;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let accountId: string;
let mainKey: string;
let subKey: string;
let subId: string;
let otherSubKey: string;
let otherSubId: string;
const requestIds: string[] = [];

const v1 = (path: string, key: string, init: RequestInit = {}) =>
  fetch(`${gateway.url}/v1${path}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers },
  });
const balanceCents = async () => (await json(await v1('/balance', mainKey))).cents as number;
const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
const webhook = (payload: string, signature: string) =>
  fetch(`${gateway.url}/webhooks/stripe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signature },
    body: payload,
  });
/** The top-up events of a reference in the account's stream: what the money rests on, not a read model. */
const topUpEvents = async (reference: string) =>
  (
    await gateway.runtime.store.readStream(accountStream(accountId), { fromRevision: 0, maxCount: 1000 })
  ).filter((e) => e.type === 'AccountToppedUp' && (e.data as { reference: string }).reference === reference);

async function signIn(target: Page, key: string, path = '/dashboard/sign-in') {
  await target.goto(`${gateway.url}${path}`);
  await target.fill('input[name=key]', key);
  await Promise.all([
    target.waitForURL((url) => !url.pathname.endsWith('/sign-in')),
    target.click('button[type=submit]'),
  ]);
}

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  stripe = await startStripeSimulator();
  gateway = await startTestGateway({
    STRIPE_SECRET_KEY: 'sk_test_dashboard',
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    STRIPE_API_BASE: stripe.url,
  });
  ({ account_id: accountId, key: mainKey } = await json(await gateway.admin('/accounts', { name: 'Acme' })));
  await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 1000, reference: 'opening' });
  for (const [text, tag, model] of [
    ['Hello there, gateway!', 'search', 'local/echo'],
    ['Summarise this please', 'search', 'local/echo-pro'],
    ['Another one', 'ads', 'local/echo'],
  ] as const) {
    const served = await chat(
      gateway.url,
      mainKey,
      { ...say(text), model, max_tokens: 32 },
      { 'x-gw-tag': tag },
    );
    expect(served.status).toBe(200);
    requestIds.push(served.headers.get('x-request-id') as string);
  }
  const sub = await json(
    await v1('/sub-accounts', mainKey, {
      method: 'POST',
      body: JSON.stringify({ name: 'Customer One', spend_cap_cents: 300, default_tag: 'cust1' }),
    }),
  );
  ({ id: subId, key: subKey } = sub);
  const other = await json(
    await v1('/sub-accounts', mainKey, {
      method: 'POST',
      body: JSON.stringify({ name: 'Customer Two', spend_cap_cents: 300 }),
    }),
  );
  ({ id: otherSubId, key: otherSubKey } = other);
  const own = await chat(gateway.url, subKey, { ...say('from customer one'), max_tokens: 16 });
  requestIds.push(own.headers.get('x-request-id') as string);
  const others = await chat(gateway.url, otherSubKey, { ...say('from customer two'), max_tokens: 16 });
  requestIds.push(others.headers.get('x-request-id') as string);

  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    timezoneId: 'America/New_York',
  });
  page = await context.newPage();
  page.on('console', (m) => console.log('BROWSER', m.type(), m.text()));
  page.on('response', (r) => r.status() >= 400 && console.log('RESP', r.status(), r.url()));
  page.on('pageerror', (e) => console.log('PAGEERROR', e.message));
});

afterAll(async () => {
  await browser?.close();
  await gateway?.close();
  await stripe?.close();
});

describe('the dashboard, as an account holder', () => {
  it('signs in with a key held nowhere in the browser: an HttpOnly, SameSite=Strict session cookie with an expiry', async () => {
    const signInPage = await fetch(`${gateway.url}/dashboard/sign-in`);
    expect(signInPage.headers.get('content-security-policy')).toContain("script-src 'self'");
    await page.goto(`${gateway.url}/dashboard`);
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
    await shot('sign-in');
    await signIn(page, mainKey);
    const [session] = (await context.cookies()).filter((c) => c.name === 'gw_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/dashboard' });
    expect(session?.expires).toBeGreaterThan(Date.now() / 1000);
    expect(session?.value).not.toContain(mainKey.slice(6));
    expect(
      // A string, so the test's types need no DOM library: the page's cookie and storage as script sees them.
      await page.evaluate('document.cookie + JSON.stringify(localStorage) + JSON.stringify(sessionStorage)'),
    ).not.toContain('sk-gw-');
  });

  it('shows the balance of the read model and a chart drawn from the charges', async () => {
    const cents = await balanceCents();
    await eventually(
      () => page.reload().then(() => page.textContent('#balance .value')),
      (text) => text === `$${(Math.floor(cents) / 100).toFixed(2)}`,
      5000,
    );
    expect(await page.textContent('#balance .value')).toBe(`$${(cents / 100).toFixed(2)}`);
    await page.waitForSelector('[data-chart] canvas');
    const data = JSON.parse((await page.getAttribute('[data-chart]', 'data-points')) as string);
    expect(data.series.map((s: { label: string }) => s.label).sort()).toEqual([
      '(untagged)',
      'ads',
      'cust1',
      'search',
    ]);
    const charged = data.series
      .flatMap((s: { nanos: string[] }) => s.nanos)
      .reduce((a: bigint, n: string) => a + BigInt(n), 0n);
    const spent = await json(await v1('/usage/by-tag', mainKey));
    const perTag = spent.data.reduce((a: number, r: { cost_cents: number }) => a + r.cost_cents, 0);
    expect(Number(charged) / 1e7).toBeCloseTo(perTag, 6);
    // This month's spend as the read model sums it: under a dollar, in exact cents.
    const month = (await page.textContent('#month-spend .value')) as string;
    expect(month).toMatch(/^\d+\.\d+¢$/);
    expect(Number.parseFloat(month)).toBeCloseTo(perTag, 6);
    expect(await page.getAttribute('[data-chart]', 'data-series')).toBe('4');
    await shot('overview');
    await page.click('a[href="/dashboard?split=model"]');
    await page.waitForSelector('.tabs a[href="/dashboard?split=model"][aria-current="true"]');
    await page.waitForSelector('[data-chart] canvas');
    const byModel = JSON.parse((await page.getAttribute('[data-chart]', 'data-points')) as string);
    expect(byModel.series.map((s: { label: string }) => s.label).sort()).toEqual([
      'local/echo',
      'local/echo-pro',
    ]);
  });

  it('shows usage by tag, model and sub-account, and downloads it as CSV', async () => {
    await page.click('nav a[href="/dashboard/usage"]');
    await page.waitForSelector('#usage');
    expect(await page.textContent('#usage')).toContain('search');
    await page.click('a[href*="by=model"]');
    await page.waitForSelector('#usage >> text=local/echo-pro');
    await shot('usage');
    const csv = await (await page.request.get(`${gateway.url}/dashboard/usage.csv?by=tag`)).text();
    expect(csv.split('\r\n')[0]).toBe('month,tag,requests,units,cost_nanos,cost_usd');
    expect(csv).toMatch(/,search,2,/);
  });

  it('lists requests with filters, shows one with its bodies and charge, and replays it against another model', async () => {
    await page.goto(`${gateway.url}/dashboard/requests?tag=ads`);
    const rows = await page.locator('#requests tbody tr').count();
    expect(rows).toBe(1);
    // A refused request says why, and every request which key sent it.
    const refused = await chat(gateway.url, mainKey, { ...say('x'), model: 'local/no-such-model' });
    expect(refused.status).toBe(404);
    const refusedId = refused.headers.get('x-request-id') as string;
    // The list is a read model, caught up a moment after the answer.
    await eventually(
      async () => {
        await page.goto(`${gateway.url}/dashboard/requests`);
        return page.locator(`#requests >> text=${refusedId}`).count();
      },
      (found) => found > 0,
      3000,
    );
    await page.waitForSelector(`#requests >> text=${requestIds[0]}`);
    const row = page.locator('#requests tr', { hasText: refusedId });
    expect(await row.locator('.status').textContent()).toContain('404 model_not_found');
    expect(await row.locator('.error-message').textContent()).toBe(refused.body.error.message);
    expect(await row.locator('.key-name').textContent()).toBe('default');
    await shot('requests');
    await page.click(`a[href="/dashboard/requests/${requestIds[0]}"]`);
    await page.waitForSelector('#request-body');
    expect(await page.textContent('#request-body')).toContain('Hello there, gateway!');
    expect(await page.textContent('#charge')).toContain('settled');
    await shot('request');
    await page.fill('input[name=target_model]', 'local/echo-pro');
    await page.click('#replay-form button');
    await page.waitForSelector('#replays >> text=local/echo-pro');
    expect(await page.textContent('#replays')).toContain(requestIds[0]);
    await shot('replays');
  });

  it('creates a key shown once, which works, and revokes it, after which it does not', async () => {
    await page.goto(`${gateway.url}/dashboard/keys`);
    await page.fill('#issue-key input[name=name]', 'laptop');
    await page.click('#create-key');
    const key = ((await page.textContent('#new-key .secret')) as string).trim();
    expect(key).toMatch(/^sk-gw-/);
    expect((await v1('/balance', key)).status).toBe(200);
    await shot('keys');
    const keyId = ((await page.textContent('#new-key strong')) as string).match(/key_\w+/)?.[0];
    page.once('dialog', (dialog) => dialog.accept());
    await page.click(`tr[data-key-id="${keyId}"] button.danger`);
    await page.waitForSelector(`tr[data-key-id="${keyId}"]`, { state: 'detached' });
    expect((await v1('/balance', key)).status).toBe(401);
    expect(await page.locator('#new-key').count()).toBe(0);
  });

  it('refuses a write without the CSRF token, or from another origin', async () => {
    const bare = await page.request.post(`${gateway.url}/dashboard/keys`, { form: { x: '1' } });
    expect(bare.status()).toBe(403);
    const csrf = await page.getAttribute('input[name=_csrf]', 'value');
    const crossSite = await page.request.post(`${gateway.url}/dashboard/keys`, {
      form: { _csrf: csrf as string },
      headers: { origin: 'https://evil.example' },
    });
    expect(crossSite.status()).toBe(403);
  });

  it('creates a sub-account (its key shown once) and edits its cap', async () => {
    await page.goto(`${gateway.url}/dashboard/sub-accounts`);
    await page.fill('#create-sub-account input[name=name]', 'Customer Three');
    await page.fill('#create-sub-account input[name=spend_cap]', '7.50');
    await page.fill('#create-sub-account input[name=default_tag]', 'cust3');
    await page.click('#create-sub-account button');
    const key = ((await page.textContent('#new-sub-account-key .secret')) as string).trim();
    expect((await json(await v1('/balance', key))).cents).toBe(750);
    const row = page.locator('#sub-accounts tr', { hasText: 'Customer Three' });
    expect(await row.locator('td.cap').textContent()).toBe('$7.50');
    await shot('sub-accounts');
    await page.click('a:text("Customer Three")');
    await page.fill('#spend-cap input[name=spend_cap]', '9');
    await page.click('#spend-cap button');
    await page.waitForSelector('#spend-cap input[name=spend_cap][value="9.00"]');
    expect((await json(await v1('/balance', key))).cents).toBe(900);
    await shot('sub-account');
    page.once('dialog', (dialog) => dialog.accept());
    await page.click('button:text("Delete sub-account")');
    await page.waitForSelector('#create-sub-account');
    expect(await page.textContent('#sub-accounts')).not.toContain('Customer Three');
    expect((await v1('/balance', key)).status).toBe(401);
  });

  it('sets a budget and shows the webhook settings', async () => {
    await page.goto(`${gateway.url}/dashboard/budgets`);
    // A refused form shows the refusal in place of the page (htmx swaps error pages in too).
    await page.fill('#set-budget input[name=tag]', 'search');
    await page.fill('#set-budget input[name=cap]', 'ten');
    await page.click('#set-budget button');
    await page.waitForSelector(`.alert.bad >> text="'cap': an amount in dollars, such as 25 or 12.50"`);
    await page.goto(`${gateway.url}/dashboard/budgets`);
    await page.fill('#set-budget input[name=tag]', 'search');
    await page.fill('#set-budget input[name=cap]', '5');
    await page.click('#set-budget button');
    await page.waitForSelector('#budgets >> text=$5.00');
    await shot('budgets');
    await page.goto(`${gateway.url}/dashboard/webhooks`);
    await page.waitForSelector('#deliveries');
    page.once('dialog', (dialog) => dialog.accept());
    await page.click('button:text("Rotate secret")');
    const rotated = ((await page.textContent('#rotated-secret .secret')) as string).trim();
    expect(await json(await v1('/webhook-secret', mainKey))).toMatchObject({
      secret: rotated,
      generation: 1,
    });
    await shot('webhooks');
    await page.goto(`${gateway.url}/dashboard/evals`);
    await page.waitForSelector('#evals');
    await shot('evals');
  });
});

describe('a top-up by card through Stripe', () => {
  let sessionId: string;

  it('creates a Checkout Session for the amount typed, and Stripe takes the payment', async () => {
    await page.goto(`${gateway.url}/dashboard/billing`);
    await shot('billing');
    await page.fill('#top-up input[name=amount]', '25.50');
    await Promise.all([page.waitForURL(`${stripe.url}/pay/**`), page.click('#top-up button')]);
    const created = stripe.created.at(-1) as Record<string, string>;
    expect(created).toMatchObject({
      mode: 'payment',
      client_reference_id: accountId,
      'line_items[0][quantity]': '1',
      'line_items[0][price_data][currency]': 'usd',
      'line_items[0][price_data][unit_amount]': '2550',
    });
    sessionId = [...stripe.sessions.keys()].at(-1) as string;
    await Promise.all([page.waitForURL(/\/dashboard\/billing\?checkout=success/), page.click('#pay')]);
    expect(await page.textContent('main')).toContain('Payment received by Stripe');
  });

  it('credits once for a correctly signed webhook, delivered again, twice at once, or later', async () => {
    const before = await balanceCents();
    const session = stripe.sessions.get(sessionId);
    const completed = stripe.event('checkout.session.completed', session);
    const first = await webhook(completed, stripe.sign(completed, WEBHOOK_SECRET));
    expect(first.status).toBe(200);
    expect(await json(first)).toMatchObject({ handled: 'credited', reference: sessionId });
    const again = await webhook(completed, stripe.sign(completed, WEBHOOK_SECRET));
    expect(await json(again)).toMatchObject({ handled: 'already_credited' });
    const async = stripe.event('checkout.session.async_payment_succeeded', session);
    const both = await Promise.all([1, 2].map(() => webhook(async, stripe.sign(async, WEBHOOK_SECRET))));
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    expect(await topUpEvents(sessionId)).toHaveLength(1);
    expect(await eventually(balanceCents, (c) => c === before + 2550, 5000)).toBe(before + 2550);
  });

  it('refuses a bad signature with 400 and credits nothing', async () => {
    const before = await balanceCents();
    const fresh = { ...stripe.sessions.get(sessionId), id: 'cs_test_forged', amount_total: 999_999 };
    const forged = stripe.event('checkout.session.completed', fresh);
    const wrongSecret = await webhook(forged, stripe.sign(forged, 'whsec_wrong'));
    expect(wrongSecret.status).toBe(400);
    expect((await json(wrongSecret)).error.message).toContain('stripe-signature');
    const stale = await webhook(
      forged,
      stripe.sign(forged, WEBHOOK_SECRET, Math.floor(Date.now() / 1000) - 600),
    );
    expect(stale.status).toBe(400);
    const altered = stripe.event('checkout.session.completed', stripe.sessions.get(sessionId));
    const tampered = await webhook(altered.replace('2550', '2551'), stripe.sign(altered, WEBHOOK_SECRET));
    expect(tampered.status).toBe(400);
    expect(await balanceCents()).toBe(before);
  });

  it('records a refund as a reversal once, and shows both on the billing page', async () => {
    const before = await balanceCents();
    const charge = stripe.refund(sessionId, 1000);
    const refunded = stripe.event('charge.refunded', charge);
    expect(await json(await webhook(refunded, stripe.sign(refunded, WEBHOOK_SECRET)))).toMatchObject({
      handled: 'reversed',
    });
    expect(await json(await webhook(refunded, stripe.sign(refunded, WEBHOOK_SECRET)))).toMatchObject({
      handled: 'already_reversed',
    });
    expect(await eventually(balanceCents, (c) => c === before - 1000, 5000)).toBe(before - 1000);
    await eventually(
      () => page.reload().then(() => page.textContent('#top-ups')),
      (text) => (text ?? '').includes('refund'),
      5000,
    );
    expect(await page.textContent('#top-ups')).toContain(sessionId);
    await shot('billing-after-top-up');
  });

  it('signs out: the cookie is gone and the pages ask for a key again', async () => {
    await Promise.all([page.waitForURL(/sign-in/), page.click('.sign-out button')]);
    expect((await context.cookies()).filter((c) => c.name === 'gw_session')).toEqual([]);
    await page.goto(`${gateway.url}/dashboard/billing`);
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
  });
});

describe("a sub-account's view", () => {
  it("shows its own usage and requests, never the account's pages or another sub-account's data", async () => {
    const own = await browser.newContext();
    const sub = await own.newPage();
    await signIn(sub, subKey);
    expect(await sub.locator('nav a').allTextContents()).toEqual([
      'Overview',
      'Usage',
      'Requests',
      'Replays',
    ]);
    expect(await sub.textContent('#balance .label')).toContain('spend cap');
    await sub.screenshot({ path: join(SHOTS, 'sub-account-view.png'), fullPage: true });
    for (const path of [
      '/dashboard/keys',
      '/dashboard/billing',
      '/dashboard/sub-accounts',
      '/dashboard/admin',
    ]) {
      expect((await sub.goto(`${gateway.url}${path}`))?.status(), path).toBe(403);
    }
    await sub.goto(`${gateway.url}/dashboard/sub-accounts/${otherSubId}`);
    expect(await sub.textContent('main')).not.toContain('Customer Two');
    const listed = await sub.goto(`${gateway.url}/dashboard/requests`);
    expect(listed?.status()).toBe(200);
    const text = (await sub.textContent('#requests')) as string;
    expect(text).toContain(requestIds[3]);
    for (const foreign of [requestIds[0], requestIds[4]]) {
      expect(text).not.toContain(foreign);
      expect((await sub.goto(`${gateway.url}/dashboard/requests/${foreign}`))?.status()).toBe(404);
    }
    const usage = await sub.request.get(`${gateway.url}/dashboard/usage.csv?by=model`);
    expect((await usage.text()).trim().split('\n')).toHaveLength(2);
    const bySub = await (await sub.request.get(`${gateway.url}/dashboard/usage.csv?by=sub_account`)).text();
    expect(bySub).toContain(subId);
    expect(bySub).not.toContain(otherSubId);
    await own.close();
  });
});

describe('the operator view', () => {
  it('shows accounts with balances, top-ups, the projections and the audit, for the admin token alone', async () => {
    const operator = await browser.newContext();
    const admin = await operator.newPage();
    await signIn(admin, gateway.adminToken, '/dashboard/sign-in?as=operator');
    expect(new URL(admin.url()).pathname).toBe('/dashboard/admin');
    expect(await admin.textContent('#accounts')).toContain(accountId);
    expect(await admin.textContent('#admin-top-ups')).toContain('opening');
    expect(await admin.textContent('#projections')).toContain('balances');
    // A provider's bill set beside the ledger (a reconciliation as the worker records it), one row above its threshold.
    await gateway.runtime.store.append(
      reconciliationStream('openai', '2026-11-20'),
      [
        toNewEvent(
          {
            type: 'ProviderReconciled',
            data: {
              provider: 'openai',
              day: '2026-11-20',
              run: 1,
              at: new Date().toISOString(),
              thresholdPercent: 2,
              rows: [
                {
                  credential: 'team-a',
                  model: 'openai/gpt-4o-mini',
                  ledgerNanos: '1000000000',
                  providerNanos: '1030000000',
                  varianceNanos: '30000000',
                  variancePercent: 3,
                  flagged: true,
                },
              ],
              ledgerNanos: '1000000000',
              providerNanos: '1030000000',
              flagged: true,
              operatorAccountId: null,
            },
          },
          randomUUID(),
          { now: new Date() },
        ),
      ],
      'no_stream',
    );
    const reconciled = await eventually(
      async () => {
        await admin.goto(`${gateway.url}/dashboard/admin`);
        return (await admin.textContent('#reconciliation')) ?? '';
      },
      (text) => text.includes('team-a'),
      10_000,
    );
    expect(reconciled).toContain('openai/gpt-4o-mini');
    expect(reconciled).toContain('(3%)');
    expect(reconciled).toContain('above 2%');
    expect(await admin.getAttribute('#reconciliation tbody tr', 'class')).toBe('flagged');
    await admin.click('button:text("Run the audit now")');
    await admin.waitForSelector('#audit-result');
    // The checks of money; the whole verdict also covers features this test does not exercise.
    const report = (await admin.textContent('#audit-report')) as string;
    for (const check of ['read models', 'caps', 'balances', 'holds'])
      expect(report).toMatch(new RegExp(`PASS +${check} `));
    await admin.screenshot({ path: join(SHOTS, 'operator.png'), fullPage: true });
    expect((await admin.goto(`${gateway.url}/dashboard/keys`))?.status()).toBe(403);
    await operator.close();
  });
});
