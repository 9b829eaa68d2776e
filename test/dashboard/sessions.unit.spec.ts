import { describe, expect, it } from 'vitest';
import { html, money, usd } from '../../src/dashboard/html.ts';
import { Sessions } from '../../src/dashboard/session.ts';
import { dollarsToCents } from '../../src/payments/stripe.ts';

describe('dashboard sessions', () => {
  let now = new Date('2026-11-24T00:00:00Z');
  const sessions = new Sessions('gw-admin-0123456789abcdef', () => now);

  it('reads back what it signed, and nothing edited, signed under another token, or expired', () => {
    const { cookie } = sessions.issue({ kind: 'key', keyId: 'key_1' });
    expect(sessions.read(cookie)).toMatchObject({ kind: 'key', keyId: 'key_1' });
    const [payload, signature] = cookie.split('.') as [string, string];
    const edited = Buffer.from(
      Buffer.from(payload, 'base64url').toString().replace('key_1', 'key_2'),
    ).toString('base64url');
    expect(sessions.read(`${edited}.${signature}`)).toBeUndefined();
    expect(new Sessions('gw-admin-another-token-000', () => now).read(cookie)).toBeUndefined();
    expect(sessions.read(`${cookie}.x`)).toBeUndefined();
    now = new Date(now.getTime() + 8 * 3600_000);
    expect(sessions.read(cookie)).toBeUndefined();
  });

  it('ties the CSRF token to one session, and the sign-in token to its nonce', () => {
    const a = sessions.issue({ kind: 'admin' }).claims;
    const b = sessions.issue({ kind: 'admin' }).claims;
    expect(sessions.checkCsrf(a, sessions.csrfToken(a))).toBe(true);
    expect(sessions.checkCsrf(a, sessions.csrfToken(b))).toBe(false);
    expect(sessions.checkCsrf(a, undefined)).toBe(false);
    const nonce = sessions.signInNonce();
    expect(sessions.checkSignIn(nonce.cookie, nonce.token)).toBe(true);
    expect(sessions.checkSignIn(sessions.signInNonce().cookie, nonce.token)).toBe(false);
    expect(sessions.checkSignIn(undefined, nonce.token)).toBe(false);
  });
});

describe('dashboard amounts and markup', () => {
  it('reads typed dollars as whole cents without a float, and refuses anything else', () => {
    expect(dollarsToCents('25')).toBe(2500);
    expect(dollarsToCents('25.5')).toBe(2550);
    expect(dollarsToCents(' $0.07 ')).toBe(7);
    expect(dollarsToCents('19.99')).toBe(1999);
    for (const bad of ['', '1.234', '-5', '1e3', '12,50', 'ten', '0x10'])
      expect(dollarsToCents(bad)).toBeUndefined();
  });

  it('rounds a balance toward the smaller amount, and shows sub-cent spend exactly', () => {
    expect(usd(9_999_868_802n)).toBe('$9.99');
    expect(usd(-1n)).toBe('-$0.01');
    expect(usd(123_456_700_000_000n)).toBe('$123,456.70');
    expect(money(131_198n).text).toContain('>0.0131198¢<');
    expect(money(2_500_000_000n).text).toContain('>$2.50<');
  });

  it('escapes every interpolated value', () => {
    expect(html`<p title="${'"><script>'}">${'<b>&'}</p>`.text).toBe(
      '<p title="&quot;&gt;&lt;script&gt;">&lt;b&gt;&amp;</p>',
    );
  });
});
