import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { listRequests, type RequestFilter } from '../../../projections/requests/queries.ts';
import { RequestRefused } from '../../contracts/errors.ts';
import { meteredContext, openRecord } from '../../pipeline/record.ts';
import type { CallContext } from '../../pipeline/types.ts';
import { findLoggedRequest, type LoggedRequest, loggedBodies, loggedRequest } from '../../requests/lookup.ts';
import { cacheHit } from '../../requests/view.ts';
import { cents, html, time } from '../html.ts';
import type { DashboardContext } from '../index.ts';
import { csrfField } from '../layout.ts';

const text = (value: unknown, max = 200) =>
  typeof value === 'string' && value.trim() !== '' ? value.trim().slice(0, max) : undefined;

function date(value: unknown, field: string): Date | undefined {
  const given = text(value);
  if (!given) return undefined;
  const at = new Date(given);
  if (Number.isNaN(at.getTime())) throw new RequestRefused('invalid', `'${field}': a date`);
  return at;
}

/** The request log with filters, one request's detail (bodies, charge), and "replay against…". */
export function requestPages(app: FastifyInstance, ctx: DashboardContext): void {
  const { deps } = ctx;
  // The name recorded with the request; older records and the gateway's own work name the key by its name now.
  const keyName = (r: LoggedRequest) => r.keyName ?? deps.live.key(r.keyId)?.name ?? r.keyId;
  // What the support desk asks first: who sent it, and why it was refused (type, then the message the client got).
  const outcome = (r: LoggedRequest) =>
    r.status < 400
      ? html`${r.status}`
      : html`<span class="refused" title="${r.errorMessage ?? ''}">${r.status} ${r.errorType ?? ''}</span>${
          r.errorMessage ? html`<div class="muted error-message">${r.errorMessage}</div>` : ''
        }`;

  app.get('/dashboard/requests', { config: { dashboard: 'key' } }, async (request, reply) => {
    const viewer = ctx.key(request);
    const q = request.query as Record<string, unknown>;
    const status = text(q.status);
    if (status !== undefined && !/^[1-5]\d\d$/.test(status))
      throw new RequestRefused('invalid', "'status': an HTTP status such as 200 or 402");
    const filter: RequestFilter = {
      limit: 50,
      ...(text(q.after) && { after: text(q.after) }),
      ...(text(q.model) && { model: text(q.model) }),
      ...(text(q.tag) && { tag: text(q.tag) }),
      ...(status && { status: Number(status) }),
      ...(text(q.sub_account_id) && !viewer.subAccountId && { subAccountId: text(q.sub_account_id) }),
      ...(date(q.from, 'from') && { from: date(q.from, 'from') }),
      ...(date(q.to, 'to') && { to: date(q.to, 'to') }),
    };
    const rows = await listRequests(
      deps.pool,
      { accountId: viewer.accountId, subAccountId: viewer.subAccountId },
      filter,
    );
    const page = rows.slice(0, filter.limit).map(loggedRequest);
    const keep = new URLSearchParams();
    for (const name of ['model', 'tag', 'status', 'sub_account_id', 'from', 'to']) {
      const value = text(q[name]);
      if (value) keep.set(name, value);
    }
    const last = page.at(-1);
    if (last) keep.set('after', last.requestId);
    const field = (name: string, label: string, placeholder = '') =>
      html`<label>${label}<input name="${name}" value="${text(q[name]) ?? ''}" placeholder="${placeholder}"></label>`;
    return ctx.render(reply, viewer, {
      title: 'Requests',
      section: '/dashboard/requests',
      body: html`<form method="get" action="/dashboard/requests" class="row" id="request-filters">
  ${field('model', 'Model', 'local/echo')}${field('tag', 'Tag')}${field('status', 'Status', '200')}
  ${viewer.subAccountId ? '' : field('sub_account_id', 'Sub-account', 'sa_…')}
  <label>From<input type="date" name="from" value="${text(q.from) ?? ''}"></label>
  <label>To<input type="date" name="to" value="${text(q.to) ?? ''}"></label>
  <button type="submit" class="plain">Filter</button>
</form>
<table id="requests">
<thead><tr><th>Time</th><th>Request</th><th>Key</th><th>Endpoint</th><th>Model</th><th>Tag</th><th>Status</th><th>Cache</th><th class="num">Latency</th><th class="num">Cost</th></tr></thead>
<tbody>${page.map(
        (r) => html`<tr data-status="${r.status}">
  <td>${time(r.createdAt)}</td>
  <td><a href="/dashboard/requests/${encodeURIComponent(r.requestId)}">${r.requestId}</a></td>
  <td class="key-name" title="${r.keyId}">${keyName(r)}</td>
  <td>${r.endpoint}</td><td>${r.model ?? r.requestedModel ?? ''}</td><td>${r.tag ?? ''}</td>
  <td class="status">${outcome(r)}</td><td class="cache">${cacheHit(r) ? 'hit' : ''}</td>
  <td class="num">${r.totalMs} ms</td><td class="num">${cents(r.costNanos)}</td>
</tr>`,
      )}</tbody></table>
${page.length === 0 ? html`<p class="muted">No requests match.</p>` : ''}
${rows.length > filter.limit ? html`<p><a href="/dashboard/requests?${keep.toString()}">Older requests →</a></p>` : ''}`,
    });
  });

  app.get<{ Params: { id: string } }>(
    '/dashboard/requests/:id',
    { config: { dashboard: 'key' } },
    async (request, reply) => {
      const viewer = ctx.key(request);
      const logged = await findLoggedRequest(
        deps.pool,
        viewer.accountId,
        request.params.id,
        viewer.subAccountId,
      );
      if (!logged) throw new RequestRefused('not_found', `No request ${request.params.id}`);
      const bodies = await loggedBodies({ sql: deps.pool, blobs: deps.blobs }, logged);
      const { rows: charges } = await deps.pool.query<ChargeRow & { occurred_at: Date }>(
        `SELECT kind, charged_nanos::text, price_nanos::text, pass_through_nanos::text, fee_nanos::text, lines, occurred_at
         FROM charges WHERE account_id = $1 AND request_id = $2 ORDER BY occurred_at`,
        [viewer.accountId, logged.requestId],
      );
      const replayable =
        /^\/v1\/(chat\/completions|messages)$/.test(logged.endpoint) && logged.model !== null;
      const models = deps.chat.catalog
        .all()
        .filter((m) => m.capabilities.includes('chat'))
        .map((m) => m.id)
        .slice(0, 300);
      return ctx.render(reply, viewer, {
        title: `Request ${logged.requestId}`,
        section: '/dashboard/requests',
        body: html`<div class="cards">
  <div class="card"><div class="label">Status</div><div class="value">${logged.status}</div></div>
  <div class="card"><div class="label">Model</div><div class="value">${logged.model ?? '—'}</div></div>
  <div class="card"><div class="label">Charged</div><div class="value" id="request-cost">${cents(logged.costNanos)}</div></div>
  <div class="card"><div class="label">Latency</div><div class="value">${logged.totalMs} ms</div></div>
</div>
<div class="panel"><table>
<tr><th>Time</th><td>${time(logged.createdAt)}</td></tr>
<tr><th>Endpoint</th><td>${logged.endpoint}</td></tr>
<tr><th>Tag</th><td>${logged.tag ?? ''}</td></tr>
<tr><th>Sub-account</th><td>${logged.subAccountId ?? ''}</td></tr>
<tr><th>Key</th><td>${keyName(logged)} <span class="muted">${logged.keyId}</span></td></tr>
${logged.status >= 400 ? html`<tr><th>Refused</th><td id="request-error">${logged.errorType ?? ''}: ${logged.errorMessage ?? ''}</td></tr>` : ''}
<tr><th>Cache</th><td>${logged.cacheStatus ?? ''}</td></tr>
<tr><th>Attempts</th><td>${logged.attempts} (fallbacks ${logged.fallbacks})</td></tr>
<tr><th>Usage</th><td><code>${JSON.stringify(logged.usage)}</code></td></tr>
</table></div>
<h2>Charge</h2>
${
  charges.length === 0
    ? html`<p class="muted">Nothing was charged.</p>`
    : chargeTable(charges, viewer.subAccountId !== null, logged.subAccountId !== null)
}
${
  replayable
    ? html`<h2>Replay against…</h2>
<form method="post" action="/dashboard/requests/${encodeURIComponent(logged.requestId)}/replay" class="row" id="replay-form">
  ${csrfField(viewer)}
  <label>Target model<input name="target_model" list="models" required placeholder="local/echo-pro"></label>
  <datalist id="models">${models.map((m) => html`<option value="${m}">`)}</datalist>
  <button type="submit">Replay</button>
</form>
<p class="muted">The replay is a new request charged to the account, compared with this one (see Replays).</p>`
    : ''
}
<h2>Request body</h2>
${bodies ? html`<pre id="request-body">${JSON.stringify(bodies.request, null, 2)}</pre>` : html`<p class="muted">Not kept (dropped, or past retention).</p>`}
<h2>Response body</h2>
${bodies ? html`<pre id="response-body">${JSON.stringify(bodies.response, null, 2)}</pre>` : html`<p class="muted">Not kept.</p>`}`,
      });
    },
  );

  app.post<{ Params: { id: string } }>(
    '/dashboard/requests/:id/replay',
    { config: { dashboard: 'key' } },
    async (request, reply) => {
      const viewer = ctx.key(request);
      const body = (request.body ?? {}) as Record<string, unknown>;
      const target = text(body.target_model);
      if (!target) throw new RequestRefused('invalid', "'target_model': required");
      const holder = deps.live.holder(viewer.keyId);
      if (!holder) throw new RequestRefused('unauthenticated', 'The key was revoked');
      const requestId = `dash_${randomUUID()}`;
      const input = { source_request_id: request.params.id, target_model: target, shadow: false };
      const gone = new AbortController();
      request.raw.on('close', () => {
        if (!reply.raw.writableFinished) gone.abort();
      });
      // Logged as the API's own replay would be, under the dashboard's request id.
      const log = openRecord(deps.requestBodies, {
        requestId,
        auth: holder,
        endpoint: '/v1/replays',
        body: input,
      });
      const call = meteredContext<CallContext>({
        auth: holder,
        requestId,
        tag: null,
        signal: gone.signal,
        log,
      });
      const replay = await deps.replays.create(call, input);
      return reply.redirect(`/dashboard/replays?created=${encodeURIComponent(replay.id)}`, 303);
    },
  );
}

interface ChargeRow {
  kind: string;
  charged_nanos: string;
  price_nanos: string;
  pass_through_nanos: string | null;
  fee_nanos: string | null;
  lines: unknown;
}

/**
 * A request's charges. A sub-account sees what it was charged, in its price, and nothing of what its account pays
 * (the lines and the fee would show the account's margin); the account sees its cost and, for a customer's
 * request, the customer's price and the margin.
 */
function chargeTable(charges: ChargeRow[], customerView: boolean, resold: boolean) {
  if (customerView)
    return html`<table id="charge"><thead><tr><th>Kind</th><th class="num">Charged</th></tr></thead><tbody>${charges.map(
      (c) => html`<tr><td>${c.kind}</td><td class="num">${cents(c.price_nanos)}</td></tr>`,
    )}</tbody></table>`;
  return html`<table id="charge"><thead><tr><th>Kind</th><th class="num">Pass-through</th><th class="num">Fee</th><th class="num">Charged</th>${
    resold ? html`<th class="num">Customer's price</th><th class="num">Margin</th>` : ''
  }<th>Lines</th></tr></thead><tbody>${charges.map(
    (c) =>
      html`<tr><td>${c.kind}</td><td class="num">${c.pass_through_nanos ? cents(c.pass_through_nanos) : ''}</td><td class="num">${c.fee_nanos ? cents(c.fee_nanos) : ''}</td><td class="num">${cents(c.charged_nanos)}</td>${
        resold
          ? html`<td class="num">${cents(c.price_nanos)}</td><td class="num">${cents(BigInt(c.price_nanos) - BigInt(c.charged_nanos))}</td>`
          : ''
      }<td><code>${JSON.stringify(c.lines)}</code></td></tr>`,
  )}</tbody></table>`;
}
