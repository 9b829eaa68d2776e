import type { FastifyInstance, FastifyReply } from 'fastify';
import { monthOf } from '../../../events/budget.ts';
import { subAccountSpending } from '../../../projections/usage/index.ts';
import type { KeyHolder } from '../../accounts/live-state.ts';
import { periodSpending } from '../../accounts/spend-period.ts';
import { statementCsv } from '../../accounts/statement.ts';
import type { SubAccountInput, SubAccountRecord } from '../../accounts/sub-accounts.ts';
import { RequestRefused } from '../../contracts/errors.ts';
import { formOf } from '../forms.ts';
import { type Html, html, money, time } from '../html.ts';
import type { DashboardContext } from '../index.ts';
import { csrfField, shownOnce, type Viewer } from '../layout.ts';
import { spendBy } from '../queries.ts';
import { monthParam } from './account.ts';
import { settingsForms, settingsFrom } from './sub-account-form.ts';

type KeyViewer = Extract<Viewer, { kind: 'account' }>;
const centsToNanos = (whole: number) => BigInt(whole) * 10_000_000n;
const SPENT_LABEL = {
  daily: 'Spent today (UTC)',
  weekly: 'Spent this week (UTC)',
  monthly: 'Spent this month (UTC)',
} as const;

/** A month's price, cost and margin of one customer: what it was charged, what the account paid, the difference. */
interface Margin {
  price: bigint;
  cost: bigint;
}
const marginCells = (m: Margin | undefined) =>
  html`<td class="num price">${money(m?.price ?? 0n)}</td><td class="num cost">${money(m?.cost ?? 0n)}</td><td class="num margin">${money((m?.price ?? 0n) - (m?.cost ?? 0n))}</td>`;

function describeModels(sub: SubAccountRecord): Html {
  if (sub.allowed_models === null) return html`<span class="muted">every model</span>`;
  if (sub.allowed_models.length === 0) return html`none`;
  return html`${sub.allowed_models.join(', ')}`;
}

/**
 * Sub-accounts, the account holder's customers: the list with each one's margin this month, creation, and one
 * customer's page (its price book, renewing cap, limits, allowed models, this month's figures and statement). Every
 * change goes through the API's service (`SubAccounts`), checked with the API's schema.
 */
export function subAccountPages(app: FastifyInstance, ctx: DashboardContext): void {
  const { deps } = ctx;
  const config = { dashboard: 'main' as const };
  const holderOf = (viewer: KeyViewer): KeyHolder => {
    const holder = deps.live.holder(viewer.keyId);
    if (!holder) throw new RequestRefused('unauthenticated', 'The key was revoked: sign in again');
    return holder;
  };

  const listPage = async (reply: FastifyReply, viewer: KeyViewer, created?: { id: string; key: string }) => {
    const now = deps.clock();
    const month = monthOf(now);
    const [subs, bySub, lifetime] = await Promise.all([
      deps.subAccounts.list(holderOf(viewer)),
      spendBy(deps.pool, { accountId: viewer.accountId, subAccountId: null }, month, 'sub_account_id'),
      subAccountSpending(deps.pool, viewer.accountId),
    ]);
    // Exact nano-dollars, from the functions the service reads too (its record has them in cents for the API).
    const periods = await periodSpending(
      deps.pool,
      viewer.accountId,
      deps.live.subAccountsOf(viewer.accountId),
      lifetime,
      now,
    );
    const margins = new Map(
      bySub.map((l) => [l.key, { price: BigInt(l.price_nanos), cost: BigInt(l.cost_nanos) }]),
    );
    const total = [...margins.entries()]
      .filter(([key]) => key !== '')
      .reduce((sum, [, m]) => ({ price: sum.price + m.price, cost: sum.cost + m.cost }), {
        price: 0n,
        cost: 0n,
      });
    return ctx.render(reply, viewer, {
      title: 'Sub-accounts',
      section: '/dashboard/sub-accounts',
      body: html`${created ? shownOnce(`Key of sub-account ${created.id}.`, created.key, 'new-sub-account-key') : ''}
<table id="sub-accounts"><thead><tr><th>Name</th><th>Default tag</th><th class="num">Markup</th><th class="num">Cap</th><th>Renews</th>
<th class="num">Spent this period</th><th class="num">Limits</th><th>Models</th>
<th class="num">Price in ${month}</th><th class="num">Cost</th><th class="num">Margin</th></tr></thead>
<tbody>${subs.map(
        (
          s,
        ) => html`<tr data-sub-account-id="${s.id}"><td><a href="/dashboard/sub-accounts/${encodeURIComponent(s.id)}">${s.name}</a><div class="muted">${s.id}</div></td>
  <td>${s.default_tag ?? ''}</td>
  <td class="num">${s.markup_percent}%${s.price_overrides.length ? html`<div class="muted">+${s.price_overrides.length} by model</div>` : ''}</td>
  <td class="num cap">${money(centsToNanos(s.spend_cap_cents))}</td><td>${s.spend_cap_reset ?? 'for life'}</td>
  <td class="num period-spent">${money(periods.get(s.id)?.spentNanos ?? 0n)}</td>
  <td class="num">${s.rate_limit_rpm}/min${s.rate_limit_tpm === null ? '' : html`<div class="muted">${s.rate_limit_tpm.toLocaleString('en-US')} tokens/min</div>`}</td>
  <td>${describeModels(s)}</td>${marginCells(margins.get(s.id))}</tr>`,
      )}</tbody>
<tfoot><tr><th colspan="8">All customers in ${month} (UTC)</th>${marginCells(total)}</tr></tfoot></table>
<p class="muted">Price: what the customers were charged, in their price books; cost: what the account paid for
their requests; margin: the difference, the account's. Deleted sub-accounts are not listed.</p>
<h2>New sub-account</h2>
<form method="post" action="/dashboard/sub-accounts" class="row" id="create-sub-account">${csrfField(viewer)}
  <label>Name<input name="name" required maxlength="200"></label>
  <label>Spend cap ($)<input name="spend_cap" required inputmode="decimal" placeholder="10.00"></label>
  <label>Renews<select name="spend_cap_reset"><option value="">for life</option><option value="daily">daily</option><option value="weekly">weekly</option><option value="monthly">monthly</option></select></label>
  <label>Markup (%)<input name="markup_percent" inputmode="decimal" placeholder="0"></label>
  <label>Requests/min<input name="rate_limit_rpm" inputmode="numeric" placeholder="account's"></label>
  <label>Tokens/min<input name="rate_limit_tpm" inputmode="numeric" placeholder="none"></label>
  <label>Default tag<input name="default_tag" maxlength="128"></label>
  <label>External reference<input name="external_ref" maxlength="200"></label>
  <button type="submit">Create</button>
</form>`,
    });
  };

  app.get('/dashboard/sub-accounts', { config }, (request, reply) => listPage(reply, ctx.main(request)));
  app.post('/dashboard/sub-accounts', { config }, async (request, reply) => {
    const viewer = ctx.main(request);
    const input = settingsFrom(formOf(request), true) as SubAccountInput & {
      name: string;
      spend_cap_cents: number;
    };
    const created = await deps.subAccounts.create(holderOf(viewer), input, request.id);
    return listPage(reply, viewer, { id: created.id, key: created.key });
  });

  app.get<{ Params: { id: string } }>('/dashboard/sub-accounts/:id', { config }, async (request, reply) => {
    const viewer = ctx.main(request);
    const holder = holderOf(viewer);
    const month = monthParam(request, deps.clock());
    const sub = await deps.subAccounts.get(holder, request.params.id);
    const live = deps.live.subAccount(sub.id);
    const scope = { accountId: viewer.accountId, subAccountId: sub.id };
    const [byTag, statement, lifetime] = await Promise.all([
      spendBy(deps.pool, scope, month, 'tag'),
      deps.subAccounts.statement(holder, sub.id, month),
      subAccountSpending(deps.pool, viewer.accountId, sub.id),
    ]);
    const period = live
      ? (await periodSpending(deps.pool, viewer.accountId, [live], lifetime, deps.clock())).get(sub.id)
      : undefined;
    const figures = byTag.reduce(
      (sum, l) => ({ price: sum.price + BigInt(l.price_nanos), cost: sum.cost + BigInt(l.cost_nanos) }),
      { price: 0n, cost: 0n },
    );
    const saved = (request.query as Record<string, unknown>).saved !== undefined;
    const path = `/dashboard/sub-accounts/${encodeURIComponent(sub.id)}`;
    const card = (label: string, value: Html, id: string) =>
      html`<div class="card" id="${id}"><div class="label">${label}</div><div class="value">${value}</div></div>`;
    return ctx.render(reply, viewer, {
      title: `Sub-account ${sub.name}`,
      section: '/dashboard/sub-accounts',
      body: html`${saved ? html`<div class="alert ok" id="saved">Saved: in force from the customer's next request.</div>` : ''}
<p class="muted">${sub.id}${sub.external_ref ? ` · ${sub.external_ref}` : ''} ·
<a href="${path}/keys">Keys</a> · <a href="/dashboard/requests?sub_account_id=${encodeURIComponent(sub.id)}">Requests</a></p>
<div class="cards">
${card(sub.spend_cap_reset ? SPENT_LABEL[sub.spend_cap_reset] : 'Spent (lifetime)', money(period?.spentNanos ?? 0n), 'period-spent')}
${card('Cap', html`${money(centsToNanos(sub.spend_cap_cents))}${sub.period_resets_at ? html`<div class="muted">renews ${time(new Date(sub.period_resets_at * 1000))}</div>` : ''}`, 'cap')}
${card(`Price in ${month}`, money(figures.price), 'month-price')}
${card('Cost to the account', money(figures.cost), 'month-cost')}
${card('Margin', money(figures.price - figures.cost), 'month-margin')}
</div>
${settingsForms(viewer, sub)}
<h2>Statement</h2>
<form method="get" action="${path}" class="row" id="statement-month">
  <label>Month (UTC)<input type="month" name="month" value="${month}"></label>
  <button type="submit" class="plain">Show</button>
  <a id="download-statement" href="${path}/statement.csv?month=${month}" hx-boost="false" download>Download the statement of ${month} (CSV)</a>
</form>
<table id="statement"><thead><tr><th>Day (UTC)</th><th>Model</th><th class="num">Requests</th><th class="num">Units</th><th class="num">Price</th></tr></thead>
<tbody>${statement.lines.map(
        (l) =>
          html`<tr><td>${l.date}</td><td>${l.model}</td><td class="num">${l.requests}</td><td class="num">${l.units}</td><td class="num">${money(l.cost_nanos)}</td></tr>`,
      )}</tbody>
<tfoot><tr><th colspan="2">Total</th><th class="num">${statement.total.requests}</th><th class="num">${statement.total.units}</th><th class="num" id="statement-total">${money(statement.total.cost_nanos)}</th></tr></tfoot></table>
<h2>Usage in ${month} (UTC), by tag</h2>
<table id="sub-account-usage"><thead><tr><th>Tag</th><th class="num">Requests</th><th class="num">Price</th><th class="num">Cost</th><th class="num">Margin</th></tr></thead>
<tbody>${byTag.map((u) => html`<tr><td>${u.key || '(none)'}</td><td class="num">${u.requests}</td>${marginCells({ price: BigInt(u.price_nanos), cost: BigInt(u.cost_nanos) })}</tr>`)}</tbody></table>
<h2>Delete</h2>
<form method="post" action="${path}/delete" hx-confirm="Delete ${sub.name}? Its keys stop working at once.">${csrfField(viewer)}
<button type="submit" class="danger">Delete sub-account</button></form>`,
    });
  });
  app.post<{ Params: { id: string } }>('/dashboard/sub-accounts/:id', { config }, async (request, reply) => {
    const viewer = ctx.main(request);
    const input = settingsFrom(formOf(request), false);
    await deps.subAccounts.update(holderOf(viewer), request.params.id, input, request.id);
    return reply.redirect(`/dashboard/sub-accounts/${encodeURIComponent(request.params.id)}?saved=1`, 303);
  });
  app.post<{ Params: { id: string } }>(
    '/dashboard/sub-accounts/:id/delete',
    { config },
    async (request, reply) => {
      const viewer = ctx.main(request);
      await deps.subAccounts.delete(holderOf(viewer), request.params.id, request.id);
      return reply.redirect('/dashboard/sub-accounts', 303);
    },
  );
  // The API's statement (`GET /v1/sub-accounts/{id}/statement` with `Accept: text/csv`), byte for byte.
  app.get<{ Params: { id: string } }>(
    '/dashboard/sub-accounts/:id/statement.csv',
    { config },
    async (request, reply) => {
      const viewer = ctx.main(request);
      const month = monthParam(request, deps.clock());
      const statement = await deps.subAccounts.statement(holderOf(viewer), request.params.id, month);
      return reply
        .type('text/csv; charset=utf-8')
        .header(
          'content-disposition',
          `attachment; filename="statement-${statement.sub_account_id}-${month}.csv"`,
        )
        .send(statementCsv(statement));
    },
  );
}
