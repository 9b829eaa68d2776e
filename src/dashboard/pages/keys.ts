import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type KeyListing, listOwnedKeys, subAccountOwner } from '../../accounts/key-listing.ts';
import { type IssuedKey, type KeyOwner, MAX_GRACE_SECONDS, MAX_NAME } from '../../accounts/named-keys.ts';
import { invalidField, RequestRefused } from '../../contracts/errors.ts';
import { formOf, text } from '../forms.ts';
import { type Html, html, time } from '../html.ts';
import type { DashboardContext } from '../index.ts';
import { csrfField, shownOnce, type Viewer } from '../layout.ts';

type KeyViewer = Extract<Viewer, { kind: 'account' }>;
type Rotated = IssuedKey & { replaces: string; replaced_key_expires_at: number };
/** The longest expiry the form offers: a hundred years, well inside what the service takes. */
const MAX_EXPIRY_DAYS = 36_500;
const DEFAULT_GRACE_SECONDS = 3600;

/** A whole number as typed, or NaN for anything else, so that the service's own check refuses it by name. */
const whole = (value: unknown) => {
  const given = text(value, 20);
  if (given === undefined) return undefined;
  return /^-?\d+$/.test(given) ? Number(given) : Number.NaN;
};

/**
 * Named keys, the account's own (`/dashboard/keys`) and each sub-account's (`/dashboard/sub-accounts/{id}/keys`):
 * issued, rotated with a grace period and revoked through the API's service (`NamedKeys`), so the events, the
 * checks and the wait for every instance are the API's. The list is the API's (`GET /v1/keys`).
 */
export function keyPages(app: FastifyInstance, ctx: DashboardContext): void {
  const { deps } = ctx;
  const config = { dashboard: 'main' as const };

  /** Whose keys a path names, checked against the session's account (another's sub-account is a 404). */
  const ownerOf = (viewer: KeyViewer, subAccountId?: string): KeyOwner =>
    subAccountId === undefined
      ? { accountId: viewer.accountId, subAccountId: null }
      : subAccountOwner(deps.live, viewer.accountId, subAccountId);
  const base = (owner: KeyOwner) =>
    owner.subAccountId === null
      ? '/dashboard/keys'
      : `/dashboard/sub-accounts/${encodeURIComponent(owner.subAccountId)}/keys`;

  const render = async (
    reply: FastifyReply,
    viewer: KeyViewer,
    owner: KeyOwner,
    shown?: { issued: IssuedKey } | { rotated: Rotated },
  ) => {
    const keys = await listOwnedKeys(deps.live, deps.pool, owner, deps.keys.clock());
    const sub = owner.subAccountId === null ? undefined : deps.live.subAccount(owner.subAccountId);
    return ctx.render(reply, viewer, {
      title: sub ? `Keys of ${sub.name}` : 'Keys',
      section: sub ? '/dashboard/sub-accounts' : '/dashboard/keys',
      body: html`${sub ? html`<p><a href="/dashboard/sub-accounts/${encodeURIComponent(sub.subAccountId)}">← ${sub.name}</a> <span class="muted">${sub.subAccountId}</span></p>` : ''}
${shown ? shownPanel(shown) : ''}
<form method="post" action="${base(owner)}" class="row" id="issue-key">${csrfField(viewer)}
  <label>Name<input name="name" required maxlength="${MAX_NAME}" placeholder="production"></label>
  <label>Expires in (days, optional)<input name="expires_in_days" inputmode="numeric" placeholder="never"></label>
  <button type="submit" id="create-key">Create a key</button>
</form>
${keysTable(viewer, owner, keys, base(owner))}
<p class="muted">A key is shown once, when it is created or rotated; only its hash is kept. ${
        sub
          ? 'Every key of a sub-account spends under its cap, limits and allowed models, and counts in its usage.'
          : 'The key of this session cannot be revoked from it: sign in with another.'
      } A rotated key keeps working until its grace period ends, then stops on every instance.</p>`,
    });
  };

  const keysTable = (viewer: KeyViewer, owner: KeyOwner, keys: KeyListing[], path: string) =>
    html`<table id="keys"><thead><tr><th>Name</th><th>Key</th><th>Prefix</th><th>Created</th><th>Last used</th><th>Expires</th><th>Rotate</th><th></th></tr></thead>
<tbody>${keys.map((k) => {
      const replacedBy = deps.live.key(k.id)?.replacedBy ?? null;
      const own = owner.subAccountId === null && k.id === viewer.keyId;
      const at = (seconds: number | null) => time(seconds === null ? null : new Date(seconds * 1000));
      return html`<tr data-key-id="${k.id}"${replacedBy ? html` data-replaced-by="${replacedBy}"` : ''}>
  <td class="key-name">${k.name}</td>
  <td>${k.id}${own ? html` <span class="muted">(this session)</span>` : ''}${replacedBy ? html`<div class="muted">replaced by ${replacedBy}</div>` : ''}</td>
  <td><code>${k.prefix}…</code></td><td>${at(k.created_at)}</td><td>${at(k.last_used_at)}</td><td>${at(k.expires_at)}</td>
  <td>${
    replacedBy
      ? ''
      : html`<form method="post" action="${path}/${encodeURIComponent(k.id)}/rotate" class="inline rotate" hx-confirm="Rotate ${k.name}? A new key is shown once; this one keeps working for the grace period.">
    ${csrfField(viewer)}<input name="grace_seconds" value="${DEFAULT_GRACE_SECONDS}" size="7" inputmode="numeric" aria-label="Grace period in seconds" title="Grace period in seconds (0 to ${MAX_GRACE_SECONDS})"> s
    <button type="submit" class="plain">Rotate</button></form>`
  }</td>
  <td>${
    own
      ? ''
      : html`<form method="post" action="${path}/${encodeURIComponent(k.id)}/revoke" class="inline" hx-confirm="Revoke ${k.name}? Requests with it are refused at once, on every instance.">
    ${csrfField(viewer)}<button type="submit" class="danger">Revoke</button></form>`
  }</td></tr>`;
    })}</tbody></table>`;

  const issue = async (request: FastifyRequest, reply: FastifyReply, subAccountId?: string) => {
    const viewer = ctx.main(request);
    const owner = ownerOf(viewer, subAccountId);
    const body = formOf(request);
    const days = whole(body.expires_in_days);
    if (days !== undefined && !(days >= 1 && days <= MAX_EXPIRY_DAYS))
      throw invalidField('expires_in_days', `a whole number of days from 1 to ${MAX_EXPIRY_DAYS}, or empty`);
    const now = Math.floor(deps.keys.clock().getTime() / 1000);
    // The name is the service's to check (trimmed, 1 to 100 characters), as the API's is; blank is refused there.
    const name = typeof body.name === 'string' ? body.name : '';
    const issued = await deps.keys.issue(
      owner,
      { name, expiresAt: days === undefined ? null : now + days * 86_400 },
      request.id,
    );
    return render(reply, viewer, owner, { issued });
  };

  const rotate = async (request: FastifyRequest<{ Params: RouteParams }>, reply: FastifyReply) => {
    const viewer = ctx.main(request);
    const owner = ownerOf(viewer, request.params.id);
    const grace = whole(formOf(request).grace_seconds) ?? 0;
    const rotated = await deps.keys.rotate(owner, request.params.key_id, { graceSeconds: grace }, request.id);
    return render(reply, viewer, owner, { rotated });
  };

  const revoke = async (request: FastifyRequest<{ Params: RouteParams }>, reply: FastifyReply) => {
    const viewer = ctx.main(request);
    const owner = ownerOf(viewer, request.params.id);
    if (owner.subAccountId === null && request.params.key_id === viewer.keyId)
      throw new RequestRefused(
        'invalid',
        "'key_id': this session signed in with that key: sign in with another to revoke it",
      );
    await deps.keys.revoke(owner, request.params.key_id, request.id);
    return reply.redirect(base(owner), 303);
  };

  app.get('/dashboard/keys', { config }, (request, reply) => {
    const viewer = ctx.main(request);
    return render(reply, viewer, ownerOf(viewer));
  });
  app.post('/dashboard/keys', { config }, (request, reply) => issue(request, reply));
  app.post<{ Params: RouteParams }>('/dashboard/keys/:key_id/rotate', { config }, rotate);
  app.post<{ Params: RouteParams }>('/dashboard/keys/:key_id/revoke', { config }, revoke);

  app.get<{ Params: RouteParams }>('/dashboard/sub-accounts/:id/keys', { config }, (request, reply) => {
    const viewer = ctx.main(request);
    return render(reply, viewer, ownerOf(viewer, request.params.id));
  });
  app.post<{ Params: RouteParams }>('/dashboard/sub-accounts/:id/keys', { config }, (request, reply) =>
    issue(request, reply, request.params.id),
  );
  app.post<{ Params: RouteParams }>('/dashboard/sub-accounts/:id/keys/:key_id/rotate', { config }, rotate);
  app.post<{ Params: RouteParams }>('/dashboard/sub-accounts/:id/keys/:key_id/revoke', { config }, revoke);
}

interface RouteParams {
  /** The sub-account, on its keys' paths; absent on the account's own. */
  id?: string;
  key_id: string;
}

function shownPanel(shown: { issued: IssuedKey } | { rotated: Rotated }): Html {
  if ('issued' in shown) {
    const k = shown.issued;
    return shownOnce(html`New key ${k.name} (${k.id}).`, k.key, 'new-key');
  }
  const k = shown.rotated;
  return shownOnce(
    html`New key ${k.name} (${k.id}), replacing ${k.replaces}, which works until ${time(new Date(k.replaced_key_expires_at * 1000))}.`,
    k.key,
    'new-key',
  );
}
