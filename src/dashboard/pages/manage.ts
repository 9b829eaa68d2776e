import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { monthOf } from '../../../events/budget.ts';
import { webhookStream } from '../../../events/webhook.ts';
import { subAccountSpending } from '../../../projections/usage/index.ts';
import { deliveriesOf, endpointOf } from '../../../projections/webhook-deliveries/queries.ts';
import type { KeyHolder } from '../../accounts/live-state.ts';
import { RequestRefused } from '../../contracts/errors.ts';
import { dollarsToCents } from '../../payments/stripe.ts';
import { projectedUpTo } from '../../projections/wait.ts';
import { checkEndpointUrl } from '../../webhooks/url.ts';
import { type Html, html, money, time, usd } from '../html.ts';
import type { DashboardContext } from '../index.ts';
import { csrfField, type Viewer } from '../layout.ts';
import { mainKeys, spendBy } from '../queries.ts';

type KeyViewer = Extract<Viewer, { kind: 'account' }>;
const centsToNanos = (cents: number) => BigInt(cents) * 10_000_000n;
const form = (request: FastifyRequest) => (request.body ?? {}) as Record<string, unknown>;
const text = (value: unknown, max = 200) =>
  typeof value === 'string' && value.trim() !== '' ? value.trim().slice(0, max) : undefined;

function dollars(value: unknown, field: string): number | undefined {
  const given = text(value, 40);
  if (given === undefined) return undefined;
  const cents = dollarsToCents(given);
  if (cents === undefined)
    throw new RequestRefused('invalid', `'${field}': an amount in dollars, such as 25 or 12.50`);
  return cents;
}

function shownOnce(label: string, secret: string, id: string): Html {
  return html`<div class="panel" id="${id}"><p><strong>${label}</strong> It is shown this once: copy it now.</p>
<div class="secret">${secret}</div></div>`;
}

/** Keys, sub-accounts, budgets, webhooks and the replays list: the account's own management pages. */
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

  // Keys ---------------------------------------------------------------------------------------------------
  const keysPage = async (
    reply: FastifyReply,
    viewer: KeyViewer,
    created?: { key: string; key_id: string },
  ) => {
    const keys = await mainKeys(deps.pool, viewer.accountId);
    return ctx.render(reply, viewer, {
      title: 'Keys',
      section: '/dashboard/keys',
      body: html`${created ? shownOnce(`New key ${created.key_id}.`, created.key, 'new-key') : ''}
<form method="post" action="/dashboard/keys" class="row">${csrfField(viewer)}<button type="submit" id="create-key">Create a key</button></form>
<table id="keys"><thead><tr><th>Key</th><th>Prefix</th><th>Created</th><th>Revoked</th><th></th></tr></thead>
<tbody>${keys.map(
        (k) => html`<tr data-key-id="${k.key_id}"${k.revoked_at ? html` data-revoked="true"` : ''}>
  <td>${k.key_id}${k.key_id === viewer.keyId ? html` <span class="muted">(this session)</span>` : ''}</td>
  <td><code>${k.key_prefix}…</code></td><td>${time(k.created_at)}</td><td>${time(k.revoked_at)}</td>
  <td>${
    k.revoked_at || k.key_id === viewer.keyId
      ? ''
      : html`<form method="post" action="/dashboard/keys/${k.key_id}/revoke" class="inline" hx-confirm="Revoke ${k.key_id}? Requests with it will be refused at once.">
    ${csrfField(viewer)}<button type="submit" class="danger">Revoke</button></form>`
  }</td></tr>`,
      )}</tbody></table>
<p class="muted">A key is shown once, when it is created; only its hash is kept. The key of this session cannot be
revoked from it: sign in with another.</p>`,
    });
  };

  app.get('/dashboard/keys', { config: { dashboard: 'main' } }, (request, reply) =>
    keysPage(reply, ctx.main(request)),
  );
  app.post('/dashboard/keys', { config: { dashboard: 'main' } }, async (request, reply) => {
    const viewer = ctx.main(request);
    const issued = await deps.accounts.createKey(viewer.accountId, request.id);
    await settle('api_keys');
    return keysPage(reply, viewer, issued);
  });
  app.post<{ Params: { id: string } }>(
    '/dashboard/keys/:id/revoke',
    { config: { dashboard: 'main' } },
    async (request, reply) => {
      const viewer = ctx.main(request);
      const keyId = request.params.id;
      if (deps.live.keyOwner(keyId) !== viewer.accountId || deps.live.holder(keyId)?.subAccountId)
        throw new RequestRefused('not_found', `No key ${keyId}`);
      if (keyId === viewer.keyId)
        throw new RequestRefused(
          'invalid',
          'This session signed in with that key: sign in with another to revoke it',
        );
      await deps.accounts.revokeKey(keyId, request.id);
      await settle('api_keys');
      return reply.redirect('/dashboard/keys', 303);
    },
  );

  // Sub-accounts -------------------------------------------------------------------------------------------
  const subAccountsPage = async (
    reply: FastifyReply,
    viewer: KeyViewer,
    created?: { id: string; key: string },
  ) => {
    const [subs, spent] = await Promise.all([
      deps.subAccounts.list(holderOf(viewer)),
      subAccountSpending(deps.pool, viewer.accountId),
    ]);
    return ctx.render(reply, viewer, {
      title: 'Sub-accounts',
      section: '/dashboard/sub-accounts',
      body: html`${created ? shownOnce(`Key of sub-account ${created.id}.`, created.key, 'new-sub-account-key') : ''}
<table id="sub-accounts"><thead><tr><th>Name</th><th>Id</th><th>Default tag</th><th class="num">Rate limit</th><th class="num">Spent</th><th class="num">Cap</th></tr></thead>
<tbody>${subs.map(
        (
          s,
        ) => html`<tr><td><a href="/dashboard/sub-accounts/${s.id}">${s.name}</a></td><td>${s.id}</td><td>${s.default_tag ?? ''}</td>
  <td class="num">${s.rate_limit_rpm}/min</td><td class="num">${money(spent.get(s.id) ?? 0n)}</td><td class="num">${money(centsToNanos(s.spend_cap_cents))}</td></tr>`,
      )}</tbody></table>
<h2>New sub-account</h2>
<form method="post" action="/dashboard/sub-accounts" class="row" id="create-sub-account">${csrfField(viewer)}
  <label>Name<input name="name" required maxlength="200"></label>
  <label>Spend cap ($)<input name="spend_cap" required inputmode="decimal" placeholder="10.00"></label>
  <label>Rate limit (requests/min)<input name="rate_limit_rpm" inputmode="numeric" placeholder="account's"></label>
  <label>Default tag<input name="default_tag" maxlength="128"></label>
  <label>External reference<input name="external_ref" maxlength="200"></label>
  <button type="submit">Create</button>
</form>`,
    });
  };

  const settings = (request: FastifyRequest, partial: boolean) => {
    const body = form(request);
    const cap = dollars(body.spend_cap, 'spend_cap');
    const rpm = text(body.rate_limit_rpm, 12);
    if (rpm !== undefined && !/^[1-9]\d{0,6}$/.test(rpm))
      throw new RequestRefused('invalid', "'rate_limit_rpm': a whole number of requests per minute");
    const name = text(body.name);
    if (!partial && (name === undefined || cap === undefined))
      throw new RequestRefused('invalid', "'name' and 'spend_cap' are required");
    const tag = typeof body.default_tag === 'string' ? body.default_tag.trim().slice(0, 128) : undefined;
    const ref = typeof body.external_ref === 'string' ? body.external_ref.trim().slice(0, 200) : undefined;
    return {
      ...(name !== undefined && { name }),
      ...(cap !== undefined && { spend_cap_cents: cap }),
      ...(rpm !== undefined && { rate_limit_rpm: Number(rpm) }),
      ...(tag !== undefined && { default_tag: tag === '' ? null : tag }),
      ...(ref !== undefined && { external_ref: ref === '' ? null : ref }),
    };
  };

  app.get('/dashboard/sub-accounts', { config: { dashboard: 'main' } }, (request, reply) =>
    subAccountsPage(reply, ctx.main(request)),
  );
  app.post('/dashboard/sub-accounts', { config: { dashboard: 'main' } }, async (request, reply) => {
    const viewer = ctx.main(request);
    const input = settings(request, false) as { name: string; spend_cap_cents: number };
    const created = (await deps.subAccounts.create(holderOf(viewer), input, request.id)) as {
      id: string;
      key?: string;
    };
    return subAccountsPage(reply, viewer, { id: created.id, key: created.key ?? '' });
  });
  app.get<{ Params: { id: string } }>(
    '/dashboard/sub-accounts/:id',
    { config: { dashboard: 'main' } },
    async (request, reply) => {
      const viewer = ctx.main(request);
      const sub = await deps.subAccounts.get(holderOf(viewer), request.params.id);
      const spent = await subAccountSpending(deps.pool, viewer.accountId, sub.id);
      const month = monthOf(deps.clock());
      const usage = await spendBy(
        deps.pool,
        { accountId: viewer.accountId, subAccountId: sub.id },
        month,
        'tag',
      );
      return ctx.render(reply, viewer, {
        title: `Sub-account ${sub.name}`,
        section: '/dashboard/sub-accounts',
        body: html`<p class="muted">${sub.id}${sub.external_ref ? ` · ${sub.external_ref}` : ''}</p>
<form method="post" action="/dashboard/sub-accounts/${sub.id}" class="row" id="edit-sub-account">${csrfField(viewer)}
  <label>Name<input name="name" value="${sub.name}" maxlength="200"></label>
  <label>Spend cap ($)<input name="spend_cap" value="${usd(centsToNanos(sub.spend_cap_cents)).slice(1).replaceAll(',', '')}" inputmode="decimal"></label>
  <label>Rate limit (requests/min)<input name="rate_limit_rpm" value="${sub.rate_limit_rpm}" inputmode="numeric"></label>
  <label>Default tag<input name="default_tag" value="${sub.default_tag ?? ''}" maxlength="128"></label>
  <label>External reference<input name="external_ref" value="${sub.external_ref ?? ''}" maxlength="200"></label>
  <button type="submit">Save</button>
</form>
<div class="cards"><div class="card"><div class="label">Spent (lifetime)</div><div class="value">${money(spent.get(sub.id) ?? 0n)}</div></div>
<div class="card"><div class="label">Cap</div><div class="value">${money(centsToNanos(sub.spend_cap_cents))}</div></div></div>
<h2>Usage in ${month} (UTC), by tag</h2>
<table id="sub-account-usage"><thead><tr><th>Tag</th><th class="num">Requests</th><th class="num">Cost</th></tr></thead>
<tbody>${usage.map((u) => html`<tr><td>${u.key || '(none)'}</td><td class="num">${u.requests}</td><td class="num">${money(u.cost_nanos)}</td></tr>`)}</tbody></table>
<h2>Delete</h2>
<form method="post" action="/dashboard/sub-accounts/${sub.id}/delete" hx-confirm="Delete ${sub.name}? Its key stops working at once.">${csrfField(viewer)}
<button type="submit" class="danger">Delete sub-account</button></form>`,
      });
    },
  );
  app.post<{ Params: { id: string } }>(
    '/dashboard/sub-accounts/:id',
    { config: { dashboard: 'main' } },
    async (request, reply) => {
      const viewer = ctx.main(request);
      await deps.subAccounts.update(holderOf(viewer), request.params.id, settings(request, true), request.id);
      return reply.redirect(`/dashboard/sub-accounts/${encodeURIComponent(request.params.id)}`, 303);
    },
  );
  app.post<{ Params: { id: string } }>(
    '/dashboard/sub-accounts/:id/delete',
    { config: { dashboard: 'main' } },
    async (request, reply) => {
      const viewer = ctx.main(request);
      await deps.subAccounts.delete(holderOf(viewer), request.params.id, request.id);
      return reply.redirect('/dashboard/sub-accounts', 303);
    },
  );

  // Budgets ------------------------------------------------------------------------------------------------
  app.get('/dashboard/budgets', { config: { dashboard: 'main' } }, async (request, reply) => {
    const viewer = ctx.main(request);
    const month = monthOf(deps.clock());
    const spent = await spendBy(deps.pool, { accountId: viewer.accountId, subAccountId: null }, month, 'tag');
    const budgets = [...(deps.live.account(viewer.accountId)?.tagBudgets ?? new Map<string, bigint>())];
    return ctx.render(reply, viewer, {
      title: 'Budgets',
      section: '/dashboard/budgets',
      body: html`<p class="muted">A monthly cap per cost tag (UTC calendar months), enforced by every request's hold.</p>
<table id="budgets"><thead><tr><th>Tag</th><th class="num">Spent in ${month}</th><th class="num">Cap</th><th class="num">Used</th></tr></thead>
<tbody>${budgets.map(([tag, cap]) => {
        const used = BigInt(spent.find((s) => s.key === tag)?.cost_nanos ?? '0');
        const percent = cap === 0n ? '—' : `${(used * 100n) / cap}%`;
        return html`<tr><td>${tag}</td><td class="num">${money(used)}</td><td class="num">${usd(cap)}</td><td class="num">${percent}</td></tr>`;
      })}</tbody></table>
<h2>Set a budget</h2>
<form method="post" action="/dashboard/budgets" class="row" id="set-budget">${csrfField(viewer)}
  <label>Tag<input name="tag" required maxlength="128"></label>
  <label>Monthly cap ($)<input name="cap" required inputmode="decimal"></label>
  <button type="submit">Save</button>
</form>`,
    });
  });
  app.post('/dashboard/budgets', { config: { dashboard: 'main' } }, async (request, reply) => {
    const viewer = ctx.main(request);
    const body = form(request);
    const tag = text(body.tag, 128);
    const cap = dollars(body.cap, 'cap');
    if (!tag || cap === undefined) throw new RequestRefused('invalid', "'tag' and 'cap' are required");
    await deps.accounts.setTagBudget(viewer.accountId, tag, cap, request.id);
    return reply.redirect('/dashboard/budgets', 303);
  });

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
    const given = text(form(request).url, 2048);
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
