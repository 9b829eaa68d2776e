import type { FastifyInstance } from 'fastify';
import { looksLikeKey } from '../../accounts/keys.ts';
import { RequestRefused } from '../../contracts/errors.ts';
import { sameSecret } from '../../http/admin-token.ts';
import { html } from '../html.ts';
import { type DashboardContext, wantsHtml } from '../index.ts';
import { cookieHeader, parseCookies, SESSION_COOKIE, SESSION_SECONDS, SIGN_IN_COOKIE } from '../session.ts';

const Form = (body: unknown) => (body ?? {}) as Record<string, unknown>;

/** Sign-in with a key (or the operator's token), and sign-out. The key is checked once and never kept. */
export function signInPages(app: FastifyInstance, ctx: DashboardContext): void {
  const { sessions, deps } = ctx;

  const form = (
    request: Parameters<DashboardContext['secure']>[0],
    reply: Parameters<DashboardContext['render']>[0],
    message?: string,
    status = 200,
  ) => {
    const nonce = sessions.signInNonce();
    reply.header(
      'set-cookie',
      cookieHeader(SIGN_IN_COOKIE, nonce.cookie, {
        maxAge: nonce.maxAge,
        secure: ctx.secure(request),
        path: '/dashboard',
      }),
    );
    const operator = (request.query as Record<string, unknown>)?.as === 'operator';
    return ctx.render(
      reply,
      undefined,
      {
        title: 'Sign in',
        body: html`<div class="signin panel">
${message ? html`<div class="alert bad" role="alert">${message}</div>` : ''}
<form method="post" action="/dashboard/sign-in">
  <input type="hidden" name="_token" value="${nonce.token}">
  <label>${operator ? 'Admin token' : 'API key (an account key, or a sub-account key for its own view)'}
    <input type="password" name="key" autocomplete="off" required placeholder="${operator ? 'gw-admin-…' : 'sk-gw-…'}"></label>
  <p><button type="submit">Sign in</button></p>
</form>
<p class="muted">The key is checked and forgotten: the browser keeps only a signed session cookie naming the key's id,
valid for 8 hours or until the key is revoked. ${
          operator
            ? html`<a href="/dashboard/sign-in">Sign in with an API key instead</a>.`
            : html`The operator signs in <a href="/dashboard/sign-in?as=operator">with the admin token</a>.`
        }</p>
</div>`,
      },
      status,
    );
  };

  app.get('/dashboard/sign-in', { config: { dashboard: 'public' } }, (request, reply) =>
    form(request, reply),
  );

  app.post('/dashboard/sign-in', { config: { dashboard: 'public' } }, async (request, reply) => {
    const body = Form(request.body);
    const nonce = parseCookies(request.headers.cookie).get(SIGN_IN_COOKIE);
    // A browser gets the form again with the reason; any other client the API's error shape.
    const refuse = (kind: 'forbidden' | 'unauthenticated', message: string) => {
      if (!wantsHtml(request)) throw new RequestRefused(kind, message);
      return form(request, reply, message, kind === 'forbidden' ? 403 : 401);
    };
    if (!sessions.checkSignIn(nonce, body._token))
      return refuse('forbidden', 'The sign-in form expired: try again.');
    const key = typeof body.key === 'string' ? body.key.trim() : '';
    let issued: ReturnType<typeof sessions.issue> | undefined;
    if (looksLikeKey(key)) {
      const holder = deps.live.authenticate(key);
      if (holder) issued = sessions.issue({ kind: 'key', keyId: holder.keyId });
    } else if (key !== '' && sameSecret(key, deps.adminToken)) {
      issued = sessions.issue({ kind: 'admin' });
    }
    if (!issued) return refuse('unauthenticated', 'Unknown or revoked key.');
    reply.header('set-cookie', [
      cookieHeader(SESSION_COOKIE, issued.cookie, {
        maxAge: SESSION_SECONDS,
        secure: ctx.secure(request),
        path: '/dashboard',
      }),
      cookieHeader(SIGN_IN_COOKIE, '', { maxAge: 0, secure: ctx.secure(request), path: '/dashboard' }),
    ]);
    return reply.redirect(issued.claims.kind === 'admin' ? '/dashboard/admin' : '/dashboard', 303);
  });

  app.post('/dashboard/sign-out', { config: { dashboard: 'public' } }, async (request, reply) => {
    const claims = sessions.read(parseCookies(request.headers.cookie).get(SESSION_COOKIE));
    const body = Form(request.body);
    if (claims && !sessions.checkCsrf(claims, request.headers['x-csrf-token'] ?? body._csrf))
      throw new RequestRefused('forbidden', 'Missing or wrong CSRF token: reload the page and try again');
    reply.header(
      'set-cookie',
      cookieHeader(SESSION_COOKIE, '', { maxAge: 0, secure: ctx.secure(request), path: '/dashboard' }),
    );
    // A full page load, so no boosted page is left holding the old token.
    reply.header('hx-redirect', '/dashboard/sign-in');
    return reply.redirect('/dashboard/sign-in', 303);
  });
}
