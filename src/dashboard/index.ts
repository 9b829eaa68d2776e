import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type pg from 'pg';
import type { EventStore } from '../../events/store.ts';
import type { Projection } from '../../projections/types.ts';
import type { LiveAccounts } from '../accounts/live-state.ts';
import type { NamedKeys } from '../accounts/named-keys.ts';
import type { AccountService } from '../accounts/service.ts';
import type { SubAccounts } from '../accounts/sub-accounts.ts';
import type { RequestBodies } from '../billing/request-bodies.ts';
import type { ChatDeps } from '../chat/complete.ts';
import { RequestRefused } from '../contracts/errors.ts';
import type { EvalService } from '../evals/service.ts';
import type { BlobStore } from '../files/blob-store.ts';
import { describeError } from '../http/errors.ts';
import type { CardTopUps } from '../payments/stripe.ts';
import type { ReplayService } from '../replays/service.ts';
import type { Webhooks } from '../webhooks/service.ts';
import { assetRoutes } from './assets.ts';
import { html } from './html.ts';
import { layout, navFor, type Page, type Viewer } from './layout.ts';
import { accountPages } from './pages/account.ts';
import { adminPages } from './pages/admin.ts';
import { billingPages } from './pages/billing.ts';
import { budgetPages } from './pages/budgets.ts';
import { keyPages } from './pages/keys.ts';
import { managePages } from './pages/manage.ts';
import { requestPages } from './pages/requests.ts';
import { signInPages } from './pages/sign-in.ts';
import { subAccountPages } from './pages/sub-accounts.ts';
import { parseCookies, SESSION_COOKIE, Sessions } from './session.ts';
import { stripeWebhookRoute } from './stripe-webhook.ts';

export interface DashboardDeps {
  pool: pg.Pool;
  store: EventStore;
  live: LiveAccounts;
  accounts: AccountService;
  /** The API's named keys: issued, rotated and revoked with the wait for every running instance. */
  keys: NamedKeys;
  subAccounts: SubAccounts;
  replays: ReplayService;
  /** The evals list, where the gateway has evals. */
  evals?: EvalService;
  webhooks: Webhooks;
  requestBodies: RequestBodies;
  blobs: BlobStore;
  chat: ChatDeps;
  cardTopUps: CardTopUps;
  projections: readonly Projection[];
  adminToken: string;
  env: NodeJS.ProcessEnv;
  clock: () => Date;
}

/** Who a page is for: anyone (sign-in), a signed-in key, a main key only, or the operator. */
export type Audience = 'public' | 'key' | 'main' | 'admin';

declare module 'fastify' {
  interface FastifyContextConfig {
    dashboard?: Audience;
  }
  interface FastifyRequest {
    viewer?: Viewer;
  }
}

export interface DashboardContext {
  deps: DashboardDeps;
  sessions: Sessions;
  /** Whether cookies must be `Secure` (the gateway is reached over HTTPS). */
  secure: (request: FastifyRequest) => boolean;
  render: (reply: FastifyReply, viewer: Viewer | undefined, page: Page, status?: number) => FastifyReply;
  /** A main key's viewer (the account's own pages). */
  main: (request: FastifyRequest) => Extract<Viewer, { kind: 'account' }>;
  /** Any key's viewer (an account's, or a sub-account's restricted view). */
  key: (request: FastifyRequest) => Extract<Viewer, { kind: 'account' }>;
  /** Pages that exist only when the feature does (evals), added to the account's navigation. */
  extraNav: { path: string; label: string }[];
}

/**
 * The dashboard at `/dashboard`: server-rendered pages (the read models' numbers, no money computed in the
 * browser), a signed-cookie session per key, CSRF tokens on every write, and a strict Content-Security-Policy:
 * every script and style comes from the gateway itself. Also `POST /webhooks/stripe`, which credits card top-ups.
 */
export async function registerDashboard(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const sessions = new Sessions(deps.adminToken, deps.clock);
  const csp = contentSecurityPolicy(deps.env);
  const context: DashboardContext = {
    deps,
    sessions,
    // Behind a proxy that ends TLS the request reads as http: GATEWAY_URL says how clients reach the gateway.
    secure: (request) => request.protocol === 'https' || /^https:/i.test(deps.env.GATEWAY_URL ?? ''),
    render: (reply, viewer, page, status = 200) =>
      reply
        .code(status)
        .type('text/html; charset=utf-8')
        .send(layout(page, viewer, navOf(viewer)).text),
    main: (request) => {
      const viewer = request.viewer;
      if (viewer?.kind !== 'account' || viewer.subAccountId !== null)
        throw new RequestRefused('forbidden', "This page is for the account's main keys");
      return viewer;
    },
    key: (request) => {
      const viewer = request.viewer;
      if (viewer?.kind !== 'account') throw new RequestRefused('forbidden', 'Sign in with an API key');
      return viewer;
    },
    extraNav: deps.evals ? [{ path: '/dashboard/evals', label: 'Evals' }] : [],
  };
  const navOf = (viewer: Viewer | undefined) => {
    if (!viewer) return [];
    if (viewer.kind === 'admin') return [{ path: '/dashboard/admin', label: 'Operator' }];
    return navFor(viewer, context.extraNav);
  };

  await app.register(async (scope) => {
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 64 * 1024 },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    scope.addHook('onRequest', async (request, reply) => {
      reply.header('content-security-policy', csp);
      reply.header('x-frame-options', 'DENY');
      reply.header('x-content-type-options', 'nosniff');
      reply.header('referrer-policy', 'same-origin');
      if (!request.url.startsWith('/dashboard/assets/')) reply.header('cache-control', 'no-store');
    });
    scope.addHook('preHandler', async (request, reply) => {
      const audience = request.routeOptions.config.dashboard;
      if (!audience || audience === 'public') return;
      const viewer = viewerOf(request, deps, sessions);
      if (!viewer) {
        if (request.method === 'GET' && wantsHtml(request)) {
          const to = audience === 'admin' ? '/dashboard/sign-in?as=operator' : '/dashboard/sign-in';
          return reply.redirect(to, 303);
        }
        throw new RequestRefused('unauthenticated', 'Sign in to the dashboard first');
      }
      request.viewer = viewer;
      if ((audience === 'admin') !== (viewer.kind === 'admin'))
        throw new RequestRefused('forbidden', 'This page is not for this sign-in');
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        checkOrigin(request, deps.env.GATEWAY_URL);
        const body = (request.body ?? {}) as Record<string, unknown>;
        const token = request.headers['x-csrf-token'] ?? body._csrf;
        const claims = sessions.read(parseCookies(request.headers.cookie).get(SESSION_COOKIE));
        if (!claims || !sessions.checkCsrf(claims, token))
          throw new RequestRefused('forbidden', 'Missing or wrong CSRF token: reload the page and try again');
      }
      if (audience === 'main') context.main(request);
    });
    scope.setErrorHandler(async (error, request, reply) => {
      const described = describeError(error);
      if (described.status >= 500 && !(error instanceof RequestRefused))
        request.log.error({ err: error }, 'dashboard request failed');
      if (!wantsHtml(request))
        return reply.code(described.status).headers(described.headers).send(described.body);
      const viewer = request.viewer ?? viewerOf(request, deps, sessions);
      return context.render(
        reply,
        viewer,
        {
          title: described.status === 404 ? 'Not found' : 'Something is wrong',
          body: html`<div class="alert bad" role="alert">${described.body.error.message}</div>
<p><a href="/dashboard">Back to the dashboard</a></p>`,
        },
        described.status,
      );
    });

    assetRoutes(scope);
    signInPages(scope, context);
    accountPages(scope, context);
    requestPages(scope, context);
    keyPages(scope, context);
    subAccountPages(scope, context);
    budgetPages(scope, context);
    managePages(scope, context);
    billingPages(scope, context);
    adminPages(scope, context);
  });
  await app.register(stripeWebhookRoute(deps.cardTopUps));
}

function viewerOf(request: FastifyRequest, deps: DashboardDeps, sessions: Sessions): Viewer | undefined {
  const claims = sessions.read(parseCookies(request.headers.cookie).get(SESSION_COOKIE));
  if (!claims) return undefined;
  const csrf = sessions.csrfToken(claims);
  if (claims.kind === 'admin') return { kind: 'admin', csrf };
  const holder = deps.live.holder(claims.keyId);
  if (!holder) return undefined;
  if (holder.subAccountId && deps.live.subAccount(holder.subAccountId)?.deleted !== false) return undefined;
  const account = deps.live.account(holder.accountId);
  if (!account) return undefined;
  const sub = holder.subAccountId ? deps.live.subAccount(holder.subAccountId) : undefined;
  return {
    kind: 'account',
    keyId: holder.keyId,
    accountId: holder.accountId,
    subAccountId: holder.subAccountId,
    name: sub?.name ?? account.name,
    csrf,
  };
}

export function wantsHtml(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').includes('text/html') || request.headers['hx-request'] === 'true';
}

/** A write must come from the dashboard's own pages: a cross-site Origin is refused before the token is read. */
function checkOrigin(request: FastifyRequest, publicUrl: string | undefined): void {
  const origin = request.headers.origin;
  if (!origin || origin === 'null') return;
  const hostOf = (url: string) => {
    try {
      return new URL(url).host;
    } catch {
      return undefined;
    }
  };
  const host = hostOf(origin);
  // The Host a proxy forwards may be its own upstream's; GATEWAY_URL names the one clients use.
  const ours = [request.headers.host, publicUrl ? hostOf(publicUrl) : undefined];
  if (!host || !ours.includes(host)) throw new RequestRefused('forbidden', 'Cross-site request refused');
}

/**
 * Scripts, styles, images and requests from the gateway alone; forms post to it, or are redirected to Stripe's
 * checkout (its origin, or STRIPE_API_BASE's when set: a stand-in serves its own checkout page).
 */
function contentSecurityPolicy(env: NodeJS.ProcessEnv): string {
  const checkout = ['https://checkout.stripe.com'];
  if (env.STRIPE_API_BASE) {
    try {
      checkout.push(new URL(env.STRIPE_API_BASE).origin);
    } catch {
      // An unusable base fails at the first Stripe call, with its own message.
    }
  }
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    `form-action 'self' ${checkout.join(' ')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}
