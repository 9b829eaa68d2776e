import type { FastifyInstance, FastifyReply } from 'fastify';
import { webhookStream } from '../../../events/webhook.ts';
import { deliveriesOf, endpointOf } from '../../../projections/webhook-deliveries/queries.ts';
import type { KeyHolder } from '../../accounts/live-state.ts';
import { RequestRefused } from '../../contracts/errors.ts';
import { projectedUpTo } from '../../projections/wait.ts';
import { checkEndpointUrl } from '../../webhooks/url.ts';
import { formOf, text } from '../forms.ts';
import { html, time } from '../html.ts';
import type { DashboardContext } from '../index.ts';
import { csrfField, shownOnce, type Viewer } from '../layout.ts';

type KeyViewer = Extract<Viewer, { kind: 'account' }>;

/** Webhooks, and the evals and replays lists (keys, sub-accounts and budgets have their own files). */
export function managePages(app: FastifyInstance, ctx: DashboardContext): void {
  const { deps } = ctx;
  const holderOf = (viewer: KeyViewer): KeyHolder => {
    const holder = deps.live.holder(viewer.keyId);
    if (!holder) throw new RequestRefused('unauthenticated', 'The key was revoked: sign in again');
    return holder;
  };
  const settle = async (table: string) => {
    await projectedUpTo(deps.pool, deps.store, table, deps.live.position());
  };

  // Webhooks -----------------------------------------------------------------------------------------------
  const webhooksPage = async (reply: FastifyReply, viewer: KeyViewer, rotated?: string) => {
    const [endpoint, deliveries, secret] = await Promise.all([
      endpointOf(deps.pool, viewer.accountId),
      deliveriesOf(deps.pool, viewer.accountId, 20),
      deps.webhooks.secrets.current(viewer.keyId),
    ]);
    return ctx.render(reply, viewer, {
      title: 'Webhooks',
      section: '/dashboard/webhooks',
      body: html`<h2>Endpoint</h2>
<form method="post" action="/dashboard/webhooks/endpoint" class="row" id="webhook-endpoint">${csrfField(viewer)}
  <label>URL (https; empty stops the account's webhooks)<input name="url" value="${endpoint?.url ?? ''}" size="60"></label>
  <button type="submit">Save</button>
</form>
<h2>Signing secret</h2>
${rotated ? shownOnce('The new signing secret.', rotated, 'rotated-secret') : ''}
<p>This key's secret, generation ${secret.generation}. <details><summary>Show</summary><div class="secret">${secret.secret}</div></details></p>
<form method="post" action="/dashboard/webhooks/rotate" hx-confirm="Rotate the secret? Signatures made after this use the new one.">${csrfField(viewer)}
<button type="submit" class="plain">Rotate secret</button></form>
<h2>Recent deliveries</h2>
<table id="deliveries"><thead><tr><th>Created</th><th>Event</th><th>Status</th><th class="num">Attempts</th><th>Last answer</th><th></th></tr></thead>
<tbody>${deliveries.map(
        (
          d,
        ) => html`<tr><td>${time(d.created_at)}</td><td>${d.event_type}</td><td>${d.status}</td><td class="num">${d.attempts}</td>
<td>${d.last_status ?? ''} ${d.last_error ?? ''}</td><td><a href="/dashboard/webhooks/${d.delivery_id}">Attempts</a></td></tr>`,
      )}</tbody></table>`,
    });
  };
  app.get('/dashboard/webhooks', { config: { dashboard: 'main' } }, (request, reply) =>
    webhooksPage(reply, ctx.main(request)),
  );
  app.post('/dashboard/webhooks/endpoint', { config: { dashboard: 'main' } }, async (request, reply) => {
    const viewer = ctx.main(request);
    const given = text(formOf(request).url, 2048);
    const url = given === undefined ? null : await checkEndpointUrl(given, deps.env);
    await deps.accounts.setWebhookEndpoint(viewer.accountId, url, request.id);
    await settle('webhook_deliveries');
    return reply.redirect('/dashboard/webhooks', 303);
  });
  app.post('/dashboard/webhooks/rotate', { config: { dashboard: 'main' } }, async (request, reply) => {
    const viewer = ctx.main(request);
    const rotated = await deps.webhooks.secrets.rotate(holderOf(viewer), request.id);
    return webhooksPage(reply, viewer, rotated.secret);
  });
  app.get<{ Params: { id: string } }>(
    '/dashboard/webhooks/:id',
    { config: { dashboard: 'main' } },
    async (request, reply) => {
      const viewer = ctx.main(request);
      const events = await deps.store.readStream(webhookStream(request.params.id), {
        fromRevision: 0,
        maxCount: 200,
      });
      const first = events[0]?.data as { accountId?: string } | undefined;
      if (!first || first.accountId !== viewer.accountId)
        throw new RequestRefused('not_found', `No delivery ${request.params.id}`);
      return ctx.render(reply, viewer, {
        title: `Delivery ${request.params.id}`,
        section: '/dashboard/webhooks',
        body: html`<table id="attempts"><thead><tr><th>Time</th><th>Event</th><th>Attempt</th><th>Status</th><th>Error</th></tr></thead>
<tbody>${events.map((e) => {
          const d = e.data as {
            attempt?: number;
            attempts?: number;
            status?: number | null;
            error?: string | null;
          };
          return html`<tr><td>${time(e.occurredAt)}</td><td>${e.type}</td><td>${d.attempt ?? d.attempts ?? ''}</td><td>${d.status ?? ''}</td><td>${d.error ?? ''}</td></tr>`;
        })}</tbody></table>`,
      });
    },
  );

  // Evals --------------------------------------------------------------------------------------------------
  const evals = deps.evals;
  if (evals) {
    app.get('/dashboard/evals', { config: { dashboard: 'key' } }, async (request, reply) => {
      const viewer = ctx.key(request);
      const list = await evals.list(holderOf(viewer), { limit: 50 });
      return ctx.render(reply, viewer, {
        title: 'Evals',
        section: '/dashboard/evals',
        body: html`<table id="evals"><thead><tr><th>Created</th><th>Eval</th><th>Metric</th><th>Candidates</th><th>Status</th><th class="num">Progress</th><th>Winner</th><th class="num">Cost</th></tr></thead>
<tbody>${list.data.map(
          (
            e,
          ) => html`<tr><td>${time(new Date(e.created_at * 1000))}</td><td>${e.name ?? e.id} <span class="muted">${e.id}</span></td>
<td>${e.metric}</td><td>${e.candidate_models.join(', ')}</td><td>${e.status}</td>
<td class="num">${e.calls_done}/${e.calls_total}</td><td>${e.winner_model ?? (e.tie ? 'tie' : '')}</td>
<td class="num">${e.cost_cents}¢</td></tr>`,
        )}</tbody></table>
${list.data.length === 0 ? html`<p class="muted">No evals yet: <code>POST /v1/evals</code> starts one.</p>` : ''}`,
      });
    });
  }

  // Replays ------------------------------------------------------------------------------------------------
  app.get('/dashboard/replays', { config: { dashboard: 'key' } }, async (request, reply) => {
    const viewer = ctx.key(request);
    const list = await deps.replays.list(holderOf(viewer), { limit: 50 });
    const created = text((request.query as Record<string, unknown>).created);
    return ctx.render(reply, viewer, {
      title: 'Replays',
      section: '/dashboard/replays',
      body: html`${created ? html`<div class="alert ok">Replay ${created} recorded.</div>` : ''}
<table id="replays"><thead><tr><th>Created</th><th>Replay</th><th>Source</th><th>Models</th><th>Status</th><th class="num">Score Δ</th><th class="num">Cost source → target</th></tr></thead>
<tbody>${list.data.map(
        (
          r,
        ) => html`<tr><td>${time(new Date(r.created_at * 1000))}</td><td>${r.id}${r.shadow ? ' (shadow)' : ''}</td>
<td><a href="/dashboard/requests/${encodeURIComponent(r.source_request_id)}">${r.source_request_id}</a></td>
<td>${r.source_model} → ${r.target_model}</td><td>${r.status}${r.error ? html` <span class="muted">${JSON.stringify(r.error)}</span>` : ''}</td>
<td class="num">${r.score_delta ?? ''}</td><td class="num">${r.cost_source_cents ?? ''}¢ → ${r.cost_target_cents ?? ''}¢</td></tr>`,
      )}</tbody></table>
${list.data.length === 0 ? html`<p class="muted">No replays yet: open a request and choose "Replay against…".</p>` : ''}`,
    });
  });
}
