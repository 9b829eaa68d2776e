import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';

// The reference UI at /docs in a real browser: it renders the gateway's own OpenAPI document and loads nothing
// from another origin (no CDN), under the Content-Security-Policy it is served with.
let gateway: TestGateway;
let browser: Browser;

beforeAll(async () => {
  gateway = await startTestGateway();
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
});
afterAll(async () => {
  await browser?.close();
  await gateway?.close();
});

it('renders the API at /docs from the gateway alone', async () => {
  const page = await browser.newPage();
  const origins = new Set<string>();
  const refused: string[] = [];
  page.on('request', (request) => {
    if (!request.url().startsWith('data:')) origins.add(new URL(request.url()).origin);
  });
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) refused.push(message.text());
  });
  await page.goto(`${gateway.url}/docs/`);
  await page.waitForSelector('.swagger-ui .info .title', { timeout: 15_000 });
  expect(await page.textContent('.swagger-ui .info .title')).toContain('Model gateway API');
  await page.waitForSelector('[data-path="/v1/chat/completions"]', { timeout: 15_000 });
  expect([...origins]).toEqual([new URL(gateway.url).origin]);
  expect(refused).toEqual([]);
  await page.close();
});

it('sends the UI page asked for with a query string to /docs/ once, not to itself', async () => {
  const response = await fetch(`${gateway.url}/docs/static/index.html?a=1`, { redirect: 'manual' });
  expect(response.status).toBe(302);
  expect(response.headers.get('location')).toBe('/docs/?a=1');
  const plain = await fetch(`${gateway.url}/docs/static/index.html`, { redirect: 'manual' });
  expect(plain.headers.get('location')).toBe('/docs/');
});
