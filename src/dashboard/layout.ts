import { type Html, html } from './html.ts';

export type Viewer =
  | {
      kind: 'account';
      keyId: string;
      accountId: string;
      subAccountId: string | null;
      name: string;
      csrf: string;
    }
  | { kind: 'admin'; csrf: string };

interface NavItem {
  path: string;
  label: string;
}

const ACCOUNT_NAV: NavItem[] = [
  { path: '/dashboard', label: 'Overview' },
  { path: '/dashboard/usage', label: 'Usage' },
  { path: '/dashboard/requests', label: 'Requests' },
  { path: '/dashboard/keys', label: 'Keys' },
  { path: '/dashboard/sub-accounts', label: 'Sub-accounts' },
  { path: '/dashboard/budgets', label: 'Budgets' },
  { path: '/dashboard/webhooks', label: 'Webhooks' },
  { path: '/dashboard/replays', label: 'Replays' },
  { path: '/dashboard/billing', label: 'Billing' },
];
const SUB_ACCOUNT_NAV = new Set([
  '/dashboard',
  '/dashboard/usage',
  '/dashboard/requests',
  '/dashboard/replays',
]);

export function navFor(viewer: Viewer | undefined, extra: NavItem[] = []): NavItem[] {
  if (!viewer) return [];
  if (viewer.kind === 'admin') return [{ path: '/dashboard/admin', label: 'Operator' }];
  const items = [...ACCOUNT_NAV.slice(0, -1), ...extra, ACCOUNT_NAV.at(-1) as NavItem];
  return viewer.subAccountId ? items.filter((i) => SUB_ACCOUNT_NAV.has(i.path)) : items;
}

export interface Page {
  title: string;
  /** The nav entry to mark as current. */
  section?: string;
  body: Html;
}

/**
 * Every page: assets from the gateway itself, htmx boosting links and forms (each still works without it), the
 * CSRF token on every form and on htmx's own requests.
 */
export function layout(page: Page, viewer: Viewer | undefined, nav: NavItem[]): Html {
  const csrf = viewer?.csrf;
  const who =
    viewer?.kind === 'admin'
      ? 'operator'
      : viewer
        ? `${viewer.name}${viewer.subAccountId ? ` · sub-account ${viewer.subAccountId}` : ''}`
        : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="htmx-config" content='{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"historyCacheSize":0,"responseHandling":[{"code":"204","swap":false},{"code":"...","swap":true}]}'>
<title>${page.title} · Gateway</title>
<link rel="stylesheet" href="/dashboard/assets/uPlot.min.css">
<link rel="stylesheet" href="/dashboard/assets/dashboard.css">
<script src="/dashboard/assets/htmx.min.js" defer></script>
<script src="/dashboard/assets/uPlot.iife.min.js" defer></script>
<script src="/dashboard/assets/dashboard.js" defer></script>
</head>
<body${csrf ? html` hx-boost="true" hx-headers='{"x-csrf-token":"${csrf}"}'` : ''}>
<header>
  <a class="brand" href="/dashboard">Gateway</a>
  <nav>${nav.map((item) => html`<a href="${item.path}"${item.path === page.section ? html` aria-current="page"` : ''}>${item.label}</a>`)}</nav>
  ${
    csrf
      ? html`<form method="post" action="/dashboard/sign-out" class="sign-out"><span class="who">${who}</span>
  <input type="hidden" name="_csrf" value="${csrf}"><button type="submit">Sign out</button></form>`
      : ''
  }
</header>
<main id="main">
<h1>${page.title}</h1>
${page.body}
</main>
</body>
</html>`;
}

/** The token every form posts back (checked with the session's). */
export const csrfField = (viewer: Viewer) => html`<input type="hidden" name="_csrf" value="${viewer.csrf}">`;

/** A secret shown the one time it exists (a new key, a rotated signing secret): only its hash is kept. */
export function shownOnce(label: string | Html, secret: string, id: string): Html {
  return html`<div class="panel" id="${id}"><p><strong>${label}</strong> It is shown this once: copy it now.</p>
<div class="secret">${secret}</div></div>`;
}
