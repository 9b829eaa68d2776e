import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import OpenAI from 'openai';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monthOf } from '../../events/budget.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Json, json } from '../support/json.ts';

// The account holder's reselling pages (issue 32, item 9) in Chromium, against one gateway on a test clock: a
// customer's price book, cap, limits and allowed models set in the forms and charged from its next request; its
// keys issued, rotated with a grace period and revoked; its statement downloaded; the margin per customer; budgets
// listed and removed. Screenshots go to test-results/dashboard/ beside dashboard.e2e.spec.ts's.

const SHOTS = join(process.cwd(), 'test-results', 'dashboard');
let now = Date.now();
// A jump of the clock inside the test must not cross into another month (the statement's and the margin's).
if (monthOf(new Date(now)) !== monthOf(new Date(now + 600_000))) now += 600_000;
const clock = () => new Date(now);
const month = monthOf(clock());

let gateway: TestGateway;
let browser: Browser;
let page: Page;
let mainKey: string;
let subId: string;
let subKey: string;
/** X-Cost-Cents of every request the customer made, in nano-dollars: what its statement must add up to. */
const customerCharges: bigint[] = [];
/** A customer's request at its 30% markup: its id and X-Cost-Cents. */
let marked: { requestId?: string; cents?: string };
/** The customer's keys made in the pages (beside `subKey`). */
const customerKeys = new Set<string>();

const v1 = async (path: string, key: string, init: RequestInit = {}) =>
  json(
    await fetch(`${gateway.url}/v1${path}`, {
      ...init,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers },
    }),
  );
/** `X-Cost-Cents` (cents with up to seven decimals) as exact nano-dollars. */
const nanosOf = (cents: string) => {
  const [whole = '0', fraction = ''] = cents.split('.');
  return BigInt(whole) * 10_000_000n + BigInt(fraction.padEnd(7, '0'));
};
/** A chat through the OpenAI SDK; its X-Cost-Cents in nano-dollars, or the SDK's error status. */
async function ask(key: string, model = 'local/echo', text = 'Price this request, please.') {
  const client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  try {
    const { response } = await client.chat.completions
      .create({ model, messages: [{ role: 'user', content: text }], max_tokens: 32 })
      .withResponse();
    const cents = response.headers.get('x-cost-cents') as string;
    const nanos = nanosOf(cents);
    if (key === subKey || customerKeys.has(key)) customerCharges.push(nanos);
    return { status: 200, nanos, cents, requestId: response.headers.get('x-request-id') as string };
  } catch (error) {
    if (!(error instanceof OpenAI.APIError)) throw error;
    return { status: error.status as number, nanos: 0n, error: error.error as Json };
  }
}
/** The exact nano-dollars of an amount the page shows (in its title). */
const nanosShown = async (selector: string) =>
  BigInt(((await page.getAttribute(`${selector} .money`, 'title')) as string).split(' ')[0] as string);
const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
/**
 * Clicks a form's button once what the last answer showed (saved, a new key, a refusal) is taken off the page, so
 * that waiting for it waits for this answer (htmx swaps the page in place).
 */
async function press(button: string) {
  await page.evaluate(
    "for (const e of document.querySelectorAll('#saved, #new-key, .alert.bad')) e.remove()",
  );
  await page.click(button);
}
/** Submits a form; a refusal shows in place of the page, naming the field. */
async function submit(form: string, fields: Record<string, string>) {
  for (const [name, value] of Object.entries(fields)) await page.fill(`${form} [name=${name}]`, value);
  await press(`${form} button[type=submit]`);
}
const refusal = async () => (await page.locator('.alert.bad').textContent({ timeout: 5000 })) as string;

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  gateway = await startTestGateway({}, { clock });
  const opened = await json(await gateway.admin('/accounts', { name: 'Initech' }));
  mainKey = opened.key;
  await gateway.admin(`/accounts/${opened.account_id}/top-ups`, { cents: 1000, reference: 'opening' });
  ({ id: subId, key: subKey } = await v1('/sub-accounts', mainKey, {
    method: 'POST',
    body: JSON.stringify({ name: 'Globex', spend_cap_cents: 500, default_tag: 'globex' }),
  }));
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    timezoneId: 'America/New_York',
  });
  page = await context.newPage();
  page.on('dialog', (dialog) => dialog.accept());
  await page.goto(`${gateway.url}/dashboard/sign-in`);
  await page.fill('input[name=key]', mainKey);
  await Promise.all([page.waitForURL(/\/dashboard$/), page.click('button[type=submit]')]);
});

afterAll(async () => {
  await browser?.close();
  await gateway?.close();
});

describe("a customer's price book, cap, limits and allowed models", () => {
  it('are set in the forms and charged from the next request (X-Cost-Cents)', async () => {
    const before = await ask(subKey);
    const echoPro = await ask(mainKey, 'local/echo-pro');
    expect([before.status, echoPro.status]).toEqual([200, 200]);
    await page.goto(`${gateway.url}/dashboard/sub-accounts/${subId}`);
    await submit('#price-book', { markup_percent: '30', price_overrides: 'local/echo-pro = 100\n' });
    await page.waitForSelector('#saved');
    await page.selectOption('#spend-cap select[name=spend_cap_reset]', 'monthly');
    await submit('#spend-cap', { spend_cap: '4' });
    await page.waitForSelector('#saved');
    await submit('#limits', { rate_limit_tpm: '50000' });
    await page.waitForSelector('#saved');
    expect(await v1(`/sub-accounts/${subId}`, mainKey)).toMatchObject({
      markup_percent: 30,
      price_overrides: [{ model: 'local/echo-pro', markup_percent: 100 }],
      spend_cap_cents: 400,
      spend_cap_reset: 'monthly',
      rate_limit_tpm: 50_000,
      allowed_models: null,
      period_resets_at: expect.any(Number),
    });
    // The same request, priced at 30% over what the account pays (one rounding up); the override doubles echo-pro.
    const after = await ask(subKey);
    marked = after;
    expect(after.nanos).toBe((before.nanos * 13_000n + 9_999n) / 10_000n);
    expect((await ask(subKey, 'local/echo-pro')).nanos).toBe(echoPro.nanos * 2n);
    await page.check('#allowed-models input[value=list]');
    await submit('#allowed-models', { allowed_models: 'local/echo' });
    await page.waitForSelector('#saved');
    const refused = await ask(subKey, 'local/echo-pro');
    expect(refused.status).toBe(403);
    expect(refused.error?.type).toBe('permission_error');
    expect((await v1(`/sub-accounts/${subId}`, mainKey)).allowed_models).toEqual(['local/echo']);
    await shot('sub-account-settings');
  });

  it('refuses bad input with an error naming the field, and changes nothing', async () => {
    const cases: [string, Record<string, string>, string][] = [
      ['#price-book', { markup_percent: '1000.5' }, "'markup_percent': "],
      ['#price-book', { markup_percent: '12.345' }, "'markup_percent': at most two decimals"],
      [
        '#price-book',
        { markup_percent: '30', price_overrides: 'local/* = 30\nlocal/echo' },
        "'price_overrides': line 2",
      ],
      [
        '#price-book',
        { markup_percent: '30', price_overrides: 'openai gpt = 5' },
        "'price_overrides': line 1",
      ],
      ['#spend-cap', { spend_cap: 'four' }, "'spend_cap': an amount in dollars"],
      ['#limits', { rate_limit_tpm: 'lots' }, "'rate_limit_tpm': a whole number of tokens per minute"],
      ['#limits', { rate_limit_tpm: '0' }, "'rate_limit_tpm': Too small"],
      ['#allowed-models', { allowed_models: 'local/echo\nopenai/gpt#4o' }, "'allowed_models': line 2"],
    ];
    for (const [form, fields, message] of cases) {
      await page.goto(`${gateway.url}/dashboard/sub-accounts/${subId}`);
      await submit(form, fields);
      expect(await refusal(), JSON.stringify(fields)).toContain(message);
    }
    expect(await v1(`/sub-accounts/${subId}`, mainKey)).toMatchObject({
      markup_percent: 30,
      price_overrides: [{ model: 'local/echo-pro', markup_percent: 100 }],
      rate_limit_tpm: 50_000,
      allowed_models: ['local/echo'],
    });
  });

  it('shows every name it was given as text, never as markup', async () => {
    const name = '<img src=x id=injected> & "Globex"';
    await page.goto(`${gateway.url}/dashboard/sub-accounts/${subId}`);
    await submit('#edit-sub-account', { name });
    await page.waitForSelector('#saved');
    expect(await page.textContent('h1')).toBe(`Sub-account ${name}`);
    await page.goto(`${gateway.url}/dashboard/sub-accounts`);
    expect(await page.textContent(`tr[data-sub-account-id="${subId}"] a`)).toBe(name);
    expect(await page.locator('#injected').count()).toBe(0);
    await page.goto(`${gateway.url}/dashboard/sub-accounts/${subId}`);
    await submit('#edit-sub-account', { name: 'Globex' });
    await page.waitForSelector('#saved');
  });
});

describe("a customer's keys", () => {
  it('issues a named key shown once, rotates it with a grace period, after which the old one stops, and revokes', async () => {
    await page.goto(`${gateway.url}/dashboard/sub-accounts/${subId}/keys`);
    await submit('#issue-key', { name: 'ci <b>bot</b>' });
    const first = ((await page.textContent('#new-key .secret')) as string).trim();
    const firstId = ((await page.textContent('#new-key strong')) as string).match(/key_\w+/)?.[0];
    customerKeys.add(first);
    expect(await page.textContent(`tr[data-key-id="${firstId}"] .key-name`)).toBe('ci <b>bot</b>');
    expect(await page.locator('#keys b').count()).toBe(0);
    expect((await ask(first)).status).toBe(200);

    // A grace the service refuses, by its name.
    await page.fill(`tr[data-key-id="${firstId}"] input[name=grace_seconds]`, '-5');
    await press(`tr[data-key-id="${firstId}"] form.rotate button`);
    expect(await refusal()).toContain("'grace_seconds'");

    await page.goto(`${gateway.url}/dashboard/sub-accounts/${subId}/keys`);
    await page.fill(`tr[data-key-id="${firstId}"] input[name=grace_seconds]`, '60');
    await press(`tr[data-key-id="${firstId}"] form.rotate button`);
    const second = ((await page.textContent('#new-key .secret')) as string).trim();
    customerKeys.add(second);
    expect(second).not.toBe(first);
    expect(await page.textContent('#new-key strong')).toContain(`replacing ${firstId}`);
    const secondId = await page.getAttribute(`tr[data-key-id="${firstId}"]`, 'data-replaced-by');
    expect(await page.textContent(`tr[data-key-id="${secondId}"] .key-name`)).toBe('ci <b>bot</b>');
    expect([(await ask(first)).status, (await ask(second)).status]).toEqual([200, 200]);
    now += 60_000;
    expect((await ask(first)).status).toBe(401);
    expect((await ask(second)).status).toBe(200);
    await page.goto(`${gateway.url}/dashboard/sub-accounts/${subId}/keys`);
    expect(await page.locator(`tr[data-key-id="${firstId}"]`).count()).toBe(0);
    await shot('sub-account-keys');

    await page.click(`tr[data-key-id="${secondId}"] button.danger`);
    await page.waitForSelector(`tr[data-key-id="${secondId}"]`, { state: 'detached' });
    expect((await ask(second)).status).toBe(401);
    const listed = await v1(`/sub-accounts/${subId}/keys`, mainKey);
    expect(listed.data.map((k: Json) => k.id)).not.toContain(secondId);
  });

  it("rotates the account's own key with no grace: the old one stops at once; a blank name is refused", async () => {
    await page.goto(`${gateway.url}/dashboard/keys`);
    await submit('#issue-key', { name: '   ' });
    expect(await refusal()).toContain("'name'");
    await page.goto(`${gateway.url}/dashboard/keys`);
    await submit('#issue-key', { name: 'deploy', expires_in_days: '30' });
    const deploy = ((await page.textContent('#new-key .secret')) as string).trim();
    const deployId = ((await page.textContent('#new-key strong')) as string).match(/key_\w+/)?.[0];
    expect((await v1('/keys', mainKey)).data).toContainEqual(
      expect.objectContaining({
        id: deployId,
        name: 'deploy',
        expires_at: Math.floor(now / 1000) + 30 * 86_400,
      }),
    );
    await page.fill(`tr[data-key-id="${deployId}"] input[name=grace_seconds]`, '0');
    await press(`tr[data-key-id="${deployId}"] form.rotate button`);
    const replacement = ((await page.textContent('#new-key .secret')) as string).trim();
    expect((await ask(deploy)).status).toBe(401);
    expect((await ask(replacement)).status).toBe(200);
  });
});

describe("a customer's statement and the account's margin", () => {
  it("downloads the statement of a chosen month, whose total is the API's and the sum of the charges", async () => {
    const api = await eventually(
      () => v1(`/sub-accounts/${subId}/statement?month=${month}`, mainKey),
      (s) => s.total?.requests === customerCharges.length,
      5000,
    );
    const charged = customerCharges.reduce((a, b) => a + b, 0n);
    expect(BigInt(api.total.cost_nanos)).toBe(charged);
    await page.goto(`${gateway.url}/dashboard/sub-accounts/${subId}?month=${month}`);
    expect(await nanosShown('#statement-total')).toBe(charged);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-statement')]);
    expect(download.suggestedFilename()).toBe(`statement-${subId}-${month}.csv`);
    const csv = await readFile((await download.path()) as string, 'utf8');
    const asApi = await fetch(`${gateway.url}/v1/sub-accounts/${subId}/statement?month=${month}`, {
      headers: { authorization: `Bearer ${mainKey}`, accept: 'text/csv' },
    });
    expect(csv).toBe(await asApi.text());
    const total = csv.trim().split('\r\n').at(-1)?.split(',') as string[];
    expect(total[0]).toBe('total');
    expect(BigInt(total[6] as string)).toBe(charged);
    const badMonth = await page.request.get(
      `${gateway.url}/dashboard/sub-accounts/${subId}/statement.csv?month=2026-13`,
    );
    expect(badMonth.status()).toBe(400);
    expect((await badMonth.json()).error.message).toContain("'month'");
  });

  it("shows each customer's price, cost and margin for the month, as the API reports them", async () => {
    const api = await eventually(
      () => v1(`/usage/by-sub-account?month=${month}`, mainKey),
      (u) => u.data?.find((d: Json) => d.sub_account_id === subId)?.requests === customerCharges.length,
      5000,
    );
    const line = api.data.find((d: Json) => d.sub_account_id === subId);
    const nanos = (cents: number) => BigInt(Math.round(cents * 1e7));
    await page.goto(`${gateway.url}/dashboard/usage?month=${month}&by=sub_account`);
    const row = `#usage tr[data-sub-account-id="${subId}"]`;
    const [price, cost, margin] = [
      await nanosShown(`${row} .price`),
      await nanosShown(`${row} .cost`),
      await nanosShown(`${row} .margin`),
    ];
    expect([price, cost, margin]).toEqual([
      nanos(line.cost_cents),
      nanos(line.account_cost_cents),
      nanos(line.margin_cents),
    ]);
    expect(price - cost).toBe(margin);
    expect(margin).toBeGreaterThan(0n);
    expect(price).toBe(customerCharges.reduce((a, b) => a + b, 0n));
    await shot('margins');
    const csv = await (
      await page.request.get(`${gateway.url}/dashboard/usage.csv?month=${month}&by=sub_account`)
    ).text();
    expect(csv.split('\r\n')[0]).toBe(
      'month,sub_account,requests,units,cost_nanos,cost_usd,price_nanos,price_usd,margin_nanos,margin_usd',
    );
    expect(csv).toContain(`,${subId},${line.requests},`);
    expect(csv).toContain(`,${cost},`);
    expect(csv).toContain(`,${margin},`);
    await page.goto(`${gateway.url}/dashboard/sub-accounts`);
    expect(await nanosShown(`tr[data-sub-account-id="${subId}"] .margin`)).toBe(margin);
    await shot('sub-accounts-margins');
  });

  it('shows the customer its own spending in its price, never what the account paid', async () => {
    const own = await browser.newContext();
    const customer = await own.newPage();
    const key = (
      await v1(`/sub-accounts/${subId}/keys`, mainKey, { method: 'POST', body: '{"name":"view"}' })
    ).key;
    await customer.goto(`${gateway.url}/dashboard/sign-in`);
    await customer.fill('input[name=key]', key);
    await Promise.all([customer.waitForURL(/\/dashboard$/), customer.click('button[type=submit]')]);
    const spent = (await customer.getAttribute('#month-spend .money', 'title')) as string;
    expect(BigInt(spent.split(' ')[0] as string)).toBe(customerCharges.reduce((a, b) => a + b, 0n));
    const csv = await (await customer.request.get(`${gateway.url}/dashboard/usage.csv?by=model`)).text();
    const rows = csv
      .trim()
      .split('\r\n')
      .slice(1)
      .map((r) => r.split(','));
    expect(rows.reduce((a, r) => a + BigInt(r[4] as string), 0n)).toBe(
      customerCharges.reduce((a, b) => a + b, 0n),
    );
    expect(csv.split('\r\n')[0]).not.toContain('margin');
    // A request's charge is what it was charged, with none of the account's lines (pass-through, fee).
    await eventually(
      async () => (await customer.goto(`${gateway.url}/dashboard/requests/${marked.requestId}`))?.status(),
      (status) => status === 200,
      5000,
    );
    expect(await customer.locator('#charge th').allTextContents()).toEqual(['Kind', 'Charged']);
    expect(await customer.textContent('#charge td.num')).toBe(`${marked.cents}¢`);
    await own.close();
  });
});

describe('budgets', () => {
  it('are listed, set and removed, as the API sees them', async () => {
    await page.goto(`${gateway.url}/dashboard/budgets`);
    await submit('#set-budget', { tag: 'café', cap: '2' });
    expect(await refusal()).toContain("'tag'");
    await page.goto(`${gateway.url}/dashboard/budgets`);
    await submit('#set-budget', { tag: 'globex', cap: '2' });
    await page.waitForSelector('#budgets tr[data-tag="globex"]');
    expect((await v1('/budgets', mainKey)).data).toEqual([
      expect.objectContaining({ tag: 'globex', cap_cents: 200 }),
    ]);
    await page.click('#budgets tr[data-tag="globex"] button.danger');
    await page.waitForSelector('#budgets tr[data-tag="globex"]', { state: 'detached' });
    expect((await v1('/budgets', mainKey)).data).toEqual([]);
  });
});
