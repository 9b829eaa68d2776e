import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A signed-in viewer: an account's main key, a sub-account's key, or the operator. */
export type SessionClaims =
  | { kind: 'key'; keyId: string; nonce: string; expires: number }
  | { kind: 'admin'; nonce: string; expires: number };

export const SESSION_COOKIE = 'gw_session';
export const SIGN_IN_COOKIE = 'gw_sign_in';
/** Eight hours: a working day, after which the key is asked for again. */
export const SESSION_SECONDS = 8 * 60 * 60;
const SIGN_IN_SECONDS = 10 * 60;

/**
 * Sessions in a cookie, signed with HMAC-SHA256 under a secret derived from the admin token (so every instance
 * sharing the token accepts it, and changing the token signs everyone out). The cookie names the key by id, never
 * holds the key; a revoked key ends its sessions at the next request. CSRF tokens are HMACs of the session's nonce.
 */
export class Sessions {
  private readonly secret: Buffer;

  constructor(
    adminToken: string,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.secret = createHash('sha256').update(`gateway dashboard sessions v1\n${adminToken}`).digest();
  }

  private mac(text: string): string {
    return createHmac('sha256', this.secret).update(text).digest('base64url');
  }

  private now(): number {
    return Math.floor(this.clock().getTime() / 1000);
  }

  issue(claims: { kind: 'key'; keyId: string } | { kind: 'admin' }): {
    cookie: string;
    claims: SessionClaims;
  } {
    const full = {
      ...claims,
      nonce: randomBytes(16).toString('base64url'),
      expires: this.now() + SESSION_SECONDS,
    };
    const payload = Buffer.from(JSON.stringify(full)).toString('base64url');
    return { cookie: `${payload}.${this.mac(`session.${payload}`)}`, claims: full };
  }

  read(cookie: string | undefined): SessionClaims | undefined {
    if (!cookie) return undefined;
    const [payload, signature, extra] = cookie.split('.');
    if (!payload || !signature || extra !== undefined) return undefined;
    if (!same(signature, this.mac(`session.${payload}`))) return undefined;
    let claims: SessionClaims;
    try {
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as SessionClaims;
    } catch {
      return undefined;
    }
    if (typeof claims.expires !== 'number' || claims.expires <= this.now()) return undefined;
    return claims;
  }

  csrfToken(claims: SessionClaims): string {
    return this.mac(`csrf.${claims.nonce}`);
  }

  checkCsrf(claims: SessionClaims, token: unknown): boolean {
    return typeof token === 'string' && same(token, this.csrfToken(claims));
  }

  /** Before a session exists: a nonce in its own short-lived cookie, and the form's token made from it. */
  signInNonce(): { cookie: string; token: string; maxAge: number } {
    const nonce = randomBytes(16).toString('base64url');
    return { cookie: nonce, token: this.mac(`sign-in.${nonce}`), maxAge: SIGN_IN_SECONDS };
  }

  checkSignIn(nonce: string | undefined, token: unknown): boolean {
    return !!nonce && typeof token === 'string' && same(token, this.mac(`sign-in.${nonce}`));
  }
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Cookies of a request header, by name (first wins). */
export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    const name = part.slice(0, at).trim();
    if (!out.has(name)) out.set(name, part.slice(at + 1).trim());
  }
  return out;
}

export function cookieHeader(
  name: string,
  value: string,
  options: { maxAge: number; secure: boolean; path?: string },
): string {
  return [
    `${name}=${value}`,
    `Path=${options.path ?? '/'}`,
    `Max-Age=${options.maxAge}`,
    'HttpOnly',
    'SameSite=Strict',
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
}
